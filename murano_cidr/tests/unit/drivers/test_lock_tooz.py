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

"""Unit tests of the tooz backend of the ``lock`` driver, without a server.

The coordinator is a mock standing for tooz; what is checked is what the
backend asks of it and what it makes of its failures.
"""

import socket
from unittest import mock

from etcd3gw import exceptions as etcd3gw_exceptions
import fixtures
from kazoo import exceptions as kazoo_exceptions
import tooz
from tooz import coordination

from murano_cidr.engine import allocator
from murano_cidr.engine.drivers.lock import etcd_service
from murano_cidr.engine.drivers.lock import picking
from murano_cidr.engine.drivers.lock import redis_service
from murano_cidr.engine.drivers.lock import sentinel_service
from murano_cidr.engine.drivers.lock import tooz_backend
from murano_cidr.engine.drivers.lock import zookeeper_service
from murano_cidr import exceptions
from murano_cidr.operator.drivers.lock import status_checks
from murano_cidr.tests import base
from murano_cidr.tests import contract
from murano_cidr.tests.unit.drivers import memory_records


def _tooz_error(cls, text, cause):
    # What tooz's utils.raise_with_cause makes of a client's error.
    try:
        raise cls(text) from cause
    except cls as e:
        return e


class TestDescribe(base.TestCase):

    def test_an_empty_tooz_error_names_its_cause(self):
        cause = etcd3gw_exceptions.ConnectionFailedError(
            "HTTPConnectionPool: Connection refused")
        error = _tooz_error(coordination.ToozConnectionError, "", cause)
        self.assertEqual("", str(error))
        self.assertEqual("ToozConnectionError; caused by "
                         "ConnectionFailedError: HTTPConnectionPool: "
                         "Connection refused",
                         tooz_backend.describe(error))

    def test_a_repeated_text_is_said_once(self):
        cause = kazoo_exceptions.ConnectionClosedError("Connection closed")
        error = _tooz_error(tooz.ToozError,
                            "operation error: Connection closed", cause)
        self.assertEqual("ToozError: operation error: Connection closed",
                         tooz_backend.describe(error))

    def test_control_characters_are_escaped(self):
        reason = tooz_backend.describe(
            tooz.ToozError("bad\nline\x1b[31m"))
        self.assertEqual("ToozError: bad\\nline\\x1b[31m", reason)

    def test_a_long_reason_is_cut(self):
        reason = tooz_backend.describe(tooz.ToozError("x" * 5000))
        self.assertEqual(tooz_backend.MAX_REASON, len(reason))
        self.assertTrue(reason.endswith("..."))

    def test_an_error_raised_while_handling_another_is_not_its_cause(self):
        try:
            try:
                raise ValueError("unrelated")
            except ValueError:
                raise tooz.ToozError("the real one")
        except tooz.ToozError as e:
            self.assertEqual("ToozError: the real one",
                             tooz_backend.describe(e))


class TestClientOptions(base.TestCase):

    def test_zookeeper_calls_are_bounded_by_the_session(self):
        client = tooz_backend.for_url("zookeeper://127.0.0.1:2181")
        options = client.options(7)
        self.assertEqual(7, options["timeout"])
        for name in ("connection_retry", "command_retry"):
            self.assertEqual(7, options[name]["deadline"], name)
            self.assertLessEqual(options[name]["max_delay"], 1, name)
        # kazoo keeps the session alive with its own pings.
        self.assertFalse(client.heart)

    def test_zookeeper_gives_up_for_good_on_a_closed_connection(self):
        client = tooz_backend.for_url("zookeeper://h")
        closed = _tooz_error(
            tooz.ToozError, "operation error",
            kazoo_exceptions.ConnectionClosedError("closed"))
        self.assertTrue(client.closed(closed))
        self.assertFalse(client.closed(kazoo_exceptions.ConnectionLoss()))

    def test_etcd_needs_no_coordinator(self):
        client = tooz_backend.for_url("etcd3+http://h1:2379,h2:2379")
        # No scope lock on etcd, and tooz's client takes one member.
        self.assertFalse(client.coordinated)
        self.assertFalse(client.serialises)

    def test_redis_sockets_time_out_within_the_lock(self):
        options = tooz_backend.for_url("redis://h:6379").options(7)
        self.assertEqual({"lock_timeout": 7, "socket_timeout": 3,
                          "socket_connect_timeout": 3}, options)

    def test_a_request_waits_at_least_a_second(self):
        self.assertEqual(1, tooz_backend.request_timeout(1))
        self.assertEqual(15, tooz_backend.request_timeout(30))

    def test_local_locks_need_no_timeout(self):
        self.assertEqual({}, tooz_backend.for_url("file:///x").options(7))


class TestProbedHosts(base.TestCase):
    """The status check's TCP probe tries every host a URL names."""

    def listening(self):
        server = socket.socket()
        self.addCleanup(server.close)
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        return server.getsockname()[1]

    def test_a_zookeeper_host_list(self):
        # Port 1 on the loopback: nothing listens, the connection is
        # refused. Issue 33: urlsplit cannot read the port of a host list.
        url = "zookeeper://127.0.0.1:1,127.0.0.1:%d" % self.listening()
        self.assertIsNone(status_checks.tcp_probe(url, 5))
        reason = status_checks.tcp_probe(
            "zookeeper://127.0.0.1:1,127.0.0.1:1/chroot", 5)
        self.assertIn("cannot connect to 127.0.0.1:1", reason)
        self.assertNotIn("bad URL", reason)

    def test_every_sentinel(self):
        url = ("redis://127.0.0.1:1?sentinel=m&sentinel_fallback="
               "127.0.0.1:%d" % self.listening())
        self.assertIsNone(status_checks.tcp_probe(url, 5))
        self.assertIn("cannot connect to 127.0.0.1:1", status_checks.tcp_probe(
            "redis://127.0.0.1:1?sentinel=m", 5))


class TestSentinelURL(base.TestCase):
    """Which Redis URLs have their locks checked on the Sentinels' master."""

    def test_sentinels_in_order(self):
        url = ("redis://s1:26380?sentinel=m&sentinel_fallback=s2:26381"
               "&sentinel_fallback=s3")
        self.assertEqual([("s1", 26380), ("s2", 26381), ("s3", 26379)],
                         sentinel_service.sentinels(url))
        self.assertEqual("m", sentinel_service.master_name(url))

    def test_a_single_redis_is_not_checked(self):
        url = "redis://127.0.0.1:1"
        self.assertEqual([], sentinel_service.sentinels(url))
        self.assertIsNone(sentinel_service.master_name(url))


class ToozTestCase(base.TestCase):
    """The lock driver on a mocked tooz coordinator."""

    url = "zookeeper://127.0.0.1:2181"
    #: ``[cidr_allocator] lock_wait_timeout``.
    wait_timeout = 3

    def setUp(self):
        super().setUp()
        self.config(driver="lock", pool_cidrs=contract.SMALL_POOL,
                    subnet_prefixlen=24, coordination_url=self.url,
                    lock_timeout=7, lock_wait_timeout=self.wait_timeout)
        self.coordinator = self.new_coordinator()
        self.lock = self.coordinator.get_lock.return_value
        self.records = memory_records.MemoryRecords()
        for client in (zookeeper_service.ZooKeeper, etcd_service.Etcd3,
                       redis_service.Redis):
            self.enterContext(mock.patch.object(
                client, "records",
                lambda _client, _url, _timeout, _request: self.records))
        self.get = self.enterContext(mock.patch(
            "tooz.coordination.get_coordinator",
            return_value=self.coordinator))
        self.driver = allocator.get_allocator(self.conf)
        self.addCleanup(self.driver.close)
        self.options = (self.get.call_args or mock.call()).kwargs

    @staticmethod
    def new_coordinator():
        """Return a mocked coordinator whose locks are granted."""
        coordinator = mock.Mock()
        coordinator.requires_beating = False
        coordinator.heart.is_alive.return_value = False
        lock = coordinator.get_lock.return_value
        lock.name = b"a-lock"
        lock.acquire.return_value = True
        lock.release.return_value = True
        lock.is_still_owner.return_value = True
        return coordinator

    def enterContext(self, manager):
        # NOTE: unittest's own enterContext needs Python 3.11.
        value = manager.__enter__()
        self.addCleanup(manager.__exit__, None, None, None)
        return value


class _LockNames(object):

    def _lock_names(self):
        return [c.args[0].decode("utf-8")
                for c in self.coordinator.get_lock.call_args_list]


class TestZooKeeperBackend(ToozTestCase, _LockNames):

    def test_picks_wait_for_the_scope_lock(self):
        self.driver.allocate("net-1", scope="r")
        self.assertIn(picking.scope_lock_name("r"), self._lock_names())

    def test_the_bounding_options_reach_tooz(self):
        self.assertEqual(
            zookeeper_service.ZooKeeper().options(7), self.options)

    def test_no_heartbeat_thread(self):
        self.driver.allocate("net-1", scope="r")
        self.coordinator.start.assert_called_once_with(start_heart=False)

    def test_a_kazoo_error_is_lock_unavailable_with_its_reason(self):
        self.lock.acquire.side_effect = kazoo_exceptions.ConnectionLoss(
            "lost")
        e = self.assertRaises(exceptions.LockUnavailable,
                              self.driver.allocate, "net-1", scope="r")
        self.assertIn("ConnectionLoss: lost", str(e))
        self.assertIn(self.url, str(e))
        self.assertIsNone(self.driver.get("net-1"))

    def test_a_closed_client_is_started_again(self):
        self.lock.acquire.side_effect = [
            kazoo_exceptions.ConnectionClosedError("closed"), True]
        self.assertRaises(exceptions.LockUnavailable,
                          self.driver.allocate, "net-1", scope="r")
        self.coordinator.stop.assert_not_called()
        self.driver.allocate("net-2", scope="r")
        self.coordinator.stop.assert_called_once_with()
        self.assertEqual(2, self.coordinator.start.call_count)

    def test_a_client_whose_start_failed_is_not_started_again(self):
        # Issue 34: kazoo's start() that timed out as its connection loop
        # gave up left a request to close in the client's queue; started
        # again once the network healed, the client closed the session it
        # opened, and the call failed (every time in an eventlet engine).
        self.coordinator.start.side_effect = coordination.ToozConnectionError(
            "Operational error: Connection time-out")
        self.assertRaises(exceptions.LockUnavailable,
                          self.driver.allocate, "net-1", scope="r")
        fresh = self.new_coordinator()
        self.get.return_value = fresh
        self.driver.allocate("net-2", scope="r")
        self.coordinator.start.assert_called_once_with(start_heart=False)
        self.coordinator.stop.assert_not_called()
        fresh.start.assert_called_once_with(start_heart=False)
        self.assertEqual("net-2", self.driver.get("net-2").owner)

    def test_a_scope_lock_not_granted_names_the_option(self):
        self.lock.acquire.return_value = False
        e = self.assertRaises(exceptions.LockUnavailable,
                              self.driver.allocate, "net-1", scope="r")
        self.assertIn("lock_wait_timeout", str(e))

    def test_a_kazoo_lock_timeout_names_the_option(self):
        self.lock.acquire.side_effect = kazoo_exceptions.LockTimeout(
            "Failed to acquire lock after 3 seconds")
        e = self.assertRaises(exceptions.LockUnavailable,
                              self.driver.allocate, "net-1", scope="r")
        self.assertIn("lock_wait_timeout", str(e))

    def test_a_failed_release_is_logged_with_its_reason(self):
        logger = self.useFixture(fixtures.FakeLogger())
        self.lock.release.side_effect = kazoo_exceptions.ConnectionLoss(
            "gone")
        self.driver.allocate("net-1", scope="r")
        self.assertIn("Could not release lock murano-cidr-scope-",
                      logger.output)
        self.assertIn("ConnectionLoss: gone", logger.output)


class TestEtcdBackend(ToozTestCase, _LockNames):

    url = "etcd3+http://127.0.0.1:2379"

    def setUp(self):
        super().setUp()
        # tooz's etcd3 locks cannot tell whether they are still held.
        self.lock.is_still_owner.side_effect = tooz.NotImplemented

    def test_picks_do_not_wait_for_each_other(self):
        self.driver.allocate("net-1", scope="r")
        # No lock at all: the records alone keep engines apart.
        self.assertEqual([], self._lock_names())
        self.assertEqual(1, len(self.records.blocks()))

    def test_confirm_reports_a_record_that_was_no_longer_ours(self):
        cidr = self.driver.allocate("net-1", scope="r")
        # The compare-and-delete finds another value under the key.
        (name,) = self.records.blocks()
        self.records.data[name] = b"another engine's"
        e = self.assertRaises(exceptions.ReservationLost,
                              self.driver.confirm, "net-1")
        self.assertIn(cidr, str(e))
        self.assertIsNone(self.driver.get("net-1"))

    def test_confirm_while_etcd_is_down_is_reservation_lost(self):
        self.driver.allocate("net-1", scope="r")
        self.records.down()
        e = self.assertRaises(exceptions.ReservationLost,
                              self.driver.confirm, "net-1")
        self.assertIn("Connection refused", str(e))
        self.assertIsNone(self.driver.get("net-1"))

    def test_no_coordinator_is_built_or_started(self):
        self.driver.allocate("net-1", scope="r")
        self.driver.confirm("net-1")
        self.driver.close()
        self.get.assert_not_called()
        self.coordinator.start.assert_not_called()
