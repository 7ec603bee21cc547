#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.

"""Unit tests of what bounds each tooz backend's calls, without a server.

The functional tests in ``tests/functional/lock/test_faults.py`` check the
bounds against real servers behind real network faults; these check what
the backend asks of tooz and of the client libraries.
"""

import threading
from unittest import mock

from etcd3gw import exceptions as etcd3gw_exceptions
from kazoo import exceptions as kazoo_exceptions
from redis import exceptions as redis_exceptions
from tooz import coordination

from murano_cidr.drivers.lock import tooz_backend
from murano_cidr.drivers.lock import tooz_clients
from murano_cidr import exceptions
from murano_cidr.tests.unit.drivers import test_lock_tooz

try:
    from redis import retry as redis_retry
except ImportError:
    # redis-py < 4.1 (Xena's pin, 3.5.3) has no retry policies, and no
    # retries of its own to turn off.
    redis_retry = None


class TestRedisDeadlines(test_lock_tooz.ToozTestCase):

    url = "redis://127.0.0.1:6379"

    def setUp(self):
        self.probe = self.enterContext(mock.patch.object(
            tooz_backend, "_tcp_probe", return_value=None))
        super().setUp()

    def test_the_socket_timeouts_reach_tooz(self):
        self.assertEqual(3, self.options["socket_timeout"])
        self.assertEqual(3, self.options["socket_connect_timeout"])

    def test_a_url_timeout_wins(self):
        backend = self.enterContext(mock.patch(
            "tooz.coordination.get_coordinator"))
        tooz_backend.ToozLockBackend(self.url + "?socket_timeout=9", 7, 3)
        self.assertNotIn("socket_timeout", backend.call_args.kwargs)
        self.assertEqual(3, backend.call_args.kwargs[
            "socket_connect_timeout"])

    def test_the_host_is_probed_within_the_timeout_before_start(self):
        self.driver.allocate("net-1", scope="r")
        self.probe.assert_called_once_with(self.url, 3)
        self.coordinator.start.assert_called_once_with(start_heart=True)

    def test_an_unanswered_probe_fails_without_starting(self):
        self.probe.return_value = "cannot connect to h:6379: timed out"
        e = self.assertRaises(exceptions.LockUnavailable,
                              self.driver.allocate, "net-1", scope="r")
        self.assertIn("timed out", str(e))
        self.coordinator.start.assert_not_called()
        self.assertIsNone(self.driver.get("net-1"))
        # Once it answers, the same driver starts.
        self.probe.return_value = None
        self.driver.allocate("net-1", scope="r")
        self.coordinator.start.assert_called_once_with(start_heart=True)

    def test_redis_py_does_not_retry_after_start(self):
        self.driver.allocate("net-1", scope="r")
        client = self.coordinator._client
        if redis_retry is None:
            client.set_retry.assert_not_called()
            return
        client.set_retry.assert_called_once_with(mock.ANY)
        policy = client.set_retry.call_args.args[0]
        self.assertIsInstance(policy, redis_retry.Retry)
        # Retry.get_retries() needs redis-py 5; what the policy does, on
        # every version that has one: a failed command is not tried again.
        attempts = []

        def command():
            attempts.append(1)
            raise redis_exceptions.ConnectionError("down")

        self.assertRaises(redis_exceptions.ConnectionError,
                          policy.call_with_retry, command, lambda e: None)
        self.assertEqual(1, len(attempts))


class TestEtcdDeadlines(test_lock_tooz.ToozTestCase):

    url = "etcd3+http://127.0.0.1:2379"

    def test_a_new_lock_is_refreshed_at_once(self):
        self.driver.allocate("net-1", scope="r")
        self.lock.heartbeat.assert_called_once_with()

    def test_a_lock_that_cannot_be_refreshed_is_released(self):
        cause = etcd3gw_exceptions.ConnectionTimeoutError("timed out")
        try:
            raise coordination.OperationTimedOut("") from cause
        except coordination.OperationTimedOut as e:
            self.lock.heartbeat.side_effect = e
        e = self.assertRaises(exceptions.LockUnavailable,
                              self.driver.allocate, "net-1", scope="r")
        self.assertIn("cannot keep the lock", str(e))
        self.lock.release.assert_called_once_with()
        self.assertIsNone(self.driver.get("net-1"))


class TestZooKeeperDeadline(test_lock_tooz.ToozTestCase):
    """kazoo restarts its wait for each engine ahead that leaves."""

    wait_timeout = 1

    def setUp(self):
        super().setUp()
        self.cancelled = threading.Event()
        kazoo_lock = mock.Mock()
        kazoo_lock.cancel.side_effect = self.cancelled.set
        self.lock._lock = kazoo_lock
        self.waits = []

        def acquire(blocking):
            if blocking is False:
                return True
            self.waits.append(blocking)
            # kazoo's wait, never granted: it ends only when cancelled.
            if not self.cancelled.wait(30):
                return True
            raise kazoo_exceptions.CancelledError()

        self.lock.acquire.side_effect = acquire

    def test_the_wait_is_cancelled_at_the_deadline(self):
        e = self.assertRaises(exceptions.LockUnavailable,
                              self.driver.allocate, "net-1", scope="r")
        self.assertIn("lock_wait_timeout", str(e))
        self.assertTrue(self.cancelled.is_set())
        self.assertEqual(1, len(self.waits))
        self.assertLessEqual(self.waits[0], 1)
        self.assertIsNone(self.driver.get("net-1"))

    def test_a_granted_wait_is_not_cancelled(self):
        self.lock.acquire.side_effect = None
        self.lock.acquire.return_value = True
        self.driver.allocate("net-1", scope="r")
        self.assertFalse(self.cancelled.wait(1.5))

    def test_other_backends_wait_as_tooz_does(self):
        with tooz_clients.Client().bounded_wait(self.lock, 0):
            pass
        self.lock._lock.cancel.assert_not_called()
