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

import socket
import threading
import time
from unittest import mock


from murano_cidr.engine.drivers.lock import deadlines
from murano_cidr.engine.drivers.lock import redis_service
from murano_cidr.engine.drivers.lock import tooz_backend
from murano_cidr import exceptions
from murano_cidr.tests import base
from murano_cidr.tests.unit.drivers import test_lock_tooz

#: Seconds a test waits for something that should happen at once.
WATCHDOG = 30


class TestDeadlines(base.TestCase):

    def test_a_call_in_time_returns_or_raises_its_own(self):
        self.assertEqual(4, deadlines.call(WATCHDOG, lambda: 4))

        def fails():
            raise TimeoutError("the client's own")

        e = self.assertRaises(TimeoutError, deadlines.call, WATCHDOG, fails)
        self.assertEqual("the client's own", str(e))

    def test_a_late_call_is_undone_when_it_succeeds(self):
        go_on = threading.Event()
        undone = []
        self.assertRaises(deadlines.Late, deadlines.call, 0.1,
                          lambda: go_on.wait(WATCHDOG) and "taken",
                          undone.append)
        self.assertEqual([], undone)
        go_on.set()
        self.assertTrue(_until(lambda: undone == ["taken"]))

    def test_a_late_failure_needs_no_undo(self):
        go_on = threading.Event()
        undone = []

        def fails():
            go_on.wait(WATCHDOG)
            raise ValueError("late")

        self.assertRaises(deadlines.Late, deadlines.call, 0, fails,
                          undone.append)
        go_on.set()
        self.assertEqual([], undone)


def _until(condition):
    end = time.monotonic() + WATCHDOG
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


class TestRedisPing(base.TestCase):
    """The driver's own PING, with redis-py's retries off."""

    def listener(self):
        server = socket.socket()
        self.addCleanup(server.close)
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        return "redis://127.0.0.1:%d" % server.getsockname()[1], server

    def test_a_silent_server_is_asked_once(self):
        # The kernel accepts the connection; nothing ever answers (a
        # stopped Redis). redis-py's default would try eleven times.
        url, _ = self.listener()
        started = time.monotonic()
        reason = redis_service.Redis().ping(url, 0.5)
        self.assertIn("no answer to PING", reason)
        self.assertLess(time.monotonic() - started, 5)

    def test_a_refused_connection_is_not_retried(self):
        url, server = self.listener()
        server.close()
        reason = redis_service.Redis().ping(url, 0.5)
        self.assertIn("no answer to PING", reason)

    def test_a_url_without_host_is_not_asked(self):
        self.assertIsNone(redis_service.Redis().ping("redis:///sock", 0.5))


class TestRedisDeadlines(test_lock_tooz.ToozTestCase):

    url = "redis://127.0.0.1:6379"

    def setUp(self):
        self.ping = self.enterContext(mock.patch.object(
            redis_service.Redis, "ping", return_value=None))
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
        self.assertEqual(9, redis_service.Redis().request_seconds(
            self.url + "?socket_timeout=9", 7))

    def test_redis_is_pinged_within_the_timeout_before_start(self):
        self.driver.allocate("net-1", scope="r")
        self.ping.assert_called_once_with(self.url, 3)
        self.coordinator.start.assert_called_once_with(start_heart=True)

    def test_an_unanswered_ping_fails_without_starting(self):
        self.ping.return_value = "no answer to PING from h:6379: timed out"
        e = self.assertRaises(exceptions.LockUnavailable,
                              self.driver.allocate, "net-1", scope="r")
        self.assertIn("timed out", str(e))
        self.coordinator.start.assert_not_called()
        self.assertIsNone(self.driver.get("net-1"))
        # Once it answers, the same driver starts.
        self.ping.return_value = None
        self.driver.allocate("net-1", scope="r")
        self.coordinator.start.assert_called_once_with(start_heart=True)


class TestZooKeeperDeadline(test_lock_tooz.ToozTestCase):
    """kazoo restarts its wait for each engine ahead that leaves."""

    wait_timeout = 1

    def setUp(self):
        super().setUp()
        self.granted = threading.Event()
        self.waits = []

        def acquire(blocking):
            if blocking is False:
                return True
            self.waits.append(blocking)
            # kazoo's wait, granted only when the test says so.
            return self.granted.wait(WATCHDOG)

        self.lock.acquire.side_effect = acquire

    def test_the_driver_stops_waiting_at_the_deadline(self):
        e = self.assertRaises(exceptions.LockUnavailable,
                              self.driver.allocate, "net-1", scope="r")
        self.assertIn("lock_wait_timeout", str(e))
        self.assertEqual(1, len(self.waits))
        self.assertLessEqual(self.waits[0], 1)
        self.assertIsNone(self.driver.get("net-1"))
        # kazoo's wait went on; the lock it got late is given back.
        self.lock.release.assert_not_called()
        self.granted.set()
        self.assertTrue(_until(
            lambda: self.lock.release.called))

    def test_a_granted_wait_is_kept(self):
        self.granted.set()
        self.driver.allocate("net-1", scope="r")
        self.assertEqual(1, len(self.waits))
