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

"""Unit tests of the ``lock`` driver (file locks, tooz's file backend)."""

import contextlib
import os
import threading
from unittest import mock

import netaddr
from oslo_concurrency import lockutils
from oslo_config import fixture as config_fixture
import redis

from murano_cidr.engine import allocator
from murano_cidr.engine.drivers.lock import backend
from murano_cidr.engine.drivers.lock import options as lock_options
from murano_cidr import exceptions
from murano_cidr import messages
from murano_cidr.tests import base
from murano_cidr.tests import contract
from murano_cidr.tests.unit.drivers import memory_records

POOL = contract.SMALL_POOL_CIDRS


class LockTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.config(driver="lock", pool_cidrs=contract.SMALL_POOL,
                    subnet_prefixlen=24)

    def make_driver(self):
        driver = allocator.get_allocator(self.conf)
        self.addCleanup(driver.close)
        return driver


class TestMixedSubnetSizes(LockTestCase):

    def test_a_23_and_a_24_engine_never_overlap(self):
        self.config(pool_cidrs=["10.0.0.0/22"])
        small = self.make_driver()
        self.config(subnet_prefixlen=23)
        large = self.make_driver()
        cidrs = [large.allocate("large-0", scope="r"),
                 small.allocate("small-0", scope="r"),
                 small.allocate("small-1", scope="r")]
        self.assertRaises(exceptions.PoolExhausted, large.allocate,
                          "large-1", scope="r")
        nets = sorted(netaddr.IPNetwork(c) for c in cidrs)
        for a, b in zip(nets, nets[1:]):
            self.assertLess(a.last, b.first)

    def test_too_many_blocks_per_subnet_is_refused(self):
        self.config(pool_cidrs=["10.0.0.0/8"], subnet_prefixlen=12,
                    reservation_prefixlen=24)
        e = self.assertRaises(exceptions.InvalidConfig, self.make_driver)
        self.assertIn("reservation_prefixlen", str(e))


class TestLockPath(LockTestCase):

    def test_defaults_to_state_path(self):
        self.config_fixture.config(group="oslo_concurrency", lock_path=None)
        self.assertEqual(os.path.join(self.state_path, "locks"),
                         lock_options.lock_path(self.conf))

    def test_oslo_concurrency_lock_path_wins(self):
        path = os.path.join(self.state_path, "elsewhere")
        self.config_fixture.config(group="oslo_concurrency", lock_path=path)
        driver = self.make_driver()
        self.assertEqual("file locks under %s" % path,
                         driver.backend.description)
        driver.allocate("net-1", scope="r")
        self.assertNotEqual([], os.listdir(path))

    def test_lock_path_that_cannot_be_created(self):
        blocker = os.path.join(self.state_path, "a-file")
        with open(blocker, "w"):
            pass
        self.config_fixture.config(group="oslo_concurrency",
                                   lock_path=os.path.join(blocker, "locks"))
        e = self.assertRaises(exceptions.InvalidConfig, self.make_driver)
        self.assertIn("[oslo_concurrency] lock_path", str(e))

    def test_disabled_process_locking_is_refused(self):
        global_conf = self.useFixture(config_fixture.Config(lockutils.CONF))
        global_conf.config(group="oslo_concurrency",
                           disable_process_locking=True)
        e = self.assertRaises(exceptions.InvalidConfig, self.make_driver)
        self.assertIn("disable_process_locking", str(e))


class TestFileLocks(LockTestCase):
    """Two drivers in one process behave as two engines on one host."""

    def test_reservations_exclude_another_engine(self):
        one, two = self.make_driver(), self.make_driver()
        mine = {one.allocate("a-%d" % i, scope="r") for i in range(3)}
        theirs = two.allocate("b-1", scope="r")
        self.assertEqual(set(POOL) - mine, {theirs})
        e = self.assertRaises(exceptions.PoolExhausted, two.allocate, "b-2",
                              scope="r")
        self.assertIn("4 allocated, 0 taken", str(e))
        # Issue 34: who holds them, since when, until when, what frees
        # them.
        self.assertIn("; 4 held by unconfirmed reservations (1 by this "
                      "engine process), the oldest made ", str(e))
        self.assertIn("; the first drops at ", str(e))
        self.assertIn("when any engine process releases its owner (a "
                      "delete of the deployment, on any engine), or "
                      "reservation_timeout = 7200 s after it was made, "
                      "whether or not its engine lives; its CIDR is then "
                      "handed out again only if the router shows no subnet "
                      "overlapping it", str(e))

    def _three_held(self, later):
        """Engine one holds three of the four CIDRs; engine two's taken.

        :param later: what the router holds from the second read of taken
            on, as a function of the fourth CIDR; it holds that fourth one
            at the first read.
        :returns: ``(two, fourth, reads, taken)``.
        """
        one, two = self.make_driver(), self.make_driver()
        mine = {one.allocate("a-%d" % i, scope="r") for i in range(3)}
        (fourth,) = set(POOL) - mine
        reads = []

        def taken():
            reads.append(len(reads))
            return [fourth] if len(reads) == 1 else later(fourth)

        return two, fourth, reads, taken

    def test_exhausted_only_against_one_moment(self):
        # Engine one holds three reservations the whole time; the fourth
        # CIDR is on the router at engine two's first read of taken, and
        # gone (its network deleted) by the time two has found the three
        # others busy. Two must get the fourth, not PoolExhausted.
        two, fourth, reads, taken = self._three_held(lambda fourth: [])
        self.assertEqual(fourth, two.allocate("b-0", scope="r",
                                              taken=taken))
        self.assertEqual(3, len(reads))

    def test_exhausted_after_a_second_look(self):
        two, fourth, reads, taken = self._three_held(
            lambda fourth: [fourth])
        e = self.assertRaises(exceptions.PoolExhausted, two.allocate,
                              "b-0", scope="r", taken=taken)
        self.assertIn("3 allocated, 1 taken", str(e))
        # The first read, and the one of the second look: no more.
        self.assertEqual(2, len(reads))

    def test_release_and_close_free_the_locks(self):
        one, two = self.make_driver(), self.make_driver()
        cidrs = [one.allocate("a-%d" % i, scope="r") for i in range(4)]
        self.assertTrue(one.release("a-0"))
        self.assertEqual(cidrs[0], two.allocate("b-0", scope="r"))
        one.close()
        self.assertEqual(sorted(cidrs[1:]),
                         sorted(two.allocate("b-%d" % i, scope="r")
                                for i in range(1, 4)))

    def test_confirm_leaves_taken_the_only_record(self):
        one, two = self.make_driver(), self.make_driver()
        cidrs = [one.allocate("a-%d" % i, scope="r") for i in range(4)]
        one.confirm("a-0")
        self.assertIsNone(one.get("a-0"))
        # The subnet is Neutron's to report now: every engine, this one
        # too, relies on taken.
        self.assertRaises(exceptions.PoolExhausted, two.allocate, "b-0",
                          scope="r", taken=cidrs[:1])
        self.assertRaises(exceptions.PoolExhausted, one.allocate, "a-9",
                          scope="r", taken=cidrs[:1])
        self.assertEqual(cidrs[0], two.allocate("b-0", scope="r"))

    def test_a_delete_in_another_worker_frees_the_cidr(self):
        # Murano's workers: each deployment allocates and confirms in one,
        # its delete runs in any other. A pool of 4, deployed and deleted
        # over and over on one router, never runs out.
        workers = [self.make_driver() for _ in range(2)]
        router = set()
        for cycle in range(6):
            deploy, delete = workers[cycle % 2], workers[(cycle + 1) % 2]
            owners = ["net-%d-%d" % (cycle, i) for i in range(4)]
            for owner in owners:
                cidr = deploy.allocate(owner, scope="r",
                                       taken=lambda: sorted(router))
                router.add(cidr)
                deploy.confirm(owner)
            self.assertEqual(set(POOL), router)
            for owner in owners:
                self.assertFalse(delete.release(owner))
            router.clear()
        self.assertEqual([], workers[0].list() + workers[1].list())

    def test_a_release_elsewhere_frees_the_reservation_at_once(self):
        # Issue 34: a failed deployment deleted by another engine worker.
        one, two = self.make_driver(), self.make_driver()
        cidr = one.allocate("a-0", scope="r")
        others = {two.allocate("b-%d" % i, scope="r") for i in range(3)}
        # A confirm elsewhere does nothing; a release elsewhere frees it.
        two.confirm("a-0")
        self.assertTrue(two.release("a-0"))
        self.assertFalse(two.release("a-0"))
        self.assertEqual(cidr, two.allocate("b-3", scope="r"))
        self.assertNotIn(cidr, others)
        # Its engine learns at its confirm that it is no longer its own.
        self.assertRaises(exceptions.ReservationLost, one.confirm, "a-0")
        self.assertIsNone(one.get("a-0"))

    def test_a_confirmed_reservation_leaves_no_record(self):
        driver = self.make_driver()
        driver.allocate("a-0", scope="r")
        driver.confirm("a-0")
        lock_path = lock_options.lock_path(self.conf)
        self.assertEqual([], [n for n in os.listdir(lock_path)
                              if n.endswith(".json")])
        self.assertFalse(self.make_driver().release("a-0"))

    def test_taken_is_read_again_after_reserving(self):
        driver = self.make_driver()
        calls = []

        def taken():
            calls.append(1)
            # Nothing at the first read; three subnets appear right after.
            return [] if len(calls) == 1 else POOL[:3]

        self.assertEqual(POOL[3], driver.allocate("net-1", scope="r",
                                                  taken=taken))
        self.assertGreaterEqual(len(calls), 2)
        # Whatever was given up meanwhile is not left reserved.
        other = self.make_driver()
        self.assertEqual(sorted(POOL[:3]),
                         sorted(other.allocate("o-%d" % i, scope="r")
                                for i in range(3)))

    def test_a_generator_taken_is_read_once(self):
        driver = self.make_driver()
        self.assertEqual(POOL[3], driver.allocate(
            "net-1", scope="r", taken=(c for c in POOL[:3])))

    def test_same_owner_in_another_scope_is_a_conflict(self):
        driver = self.make_driver()
        cidr = driver.allocate("net-1", scope="r1")
        e = self.assertRaises(exceptions.OwnerConflict, driver.allocate,
                              "net-1", scope="r2")
        self.assertIn(cidr, str(e))

    def test_no_scope_is_a_scope_of_its_own(self):
        driver = self.make_driver()
        unscoped = [driver.allocate("n-%d" % i) for i in range(4)]
        self.assertEqual(sorted(POOL), sorted(unscoped))
        self.assertRaises(exceptions.PoolExhausted, driver.allocate, "n-5")
        self.assertIn(driver.allocate("s-1", scope="None"), POOL)

    def test_threads_share_one_driver(self):
        self.config(pool_cidrs=["10.30.0.0/20"])
        driver = self.make_driver()
        results = []
        barrier = threading.Barrier(8)

        def work(i):
            barrier.wait()
            for j in range(2):
                results.append(driver.allocate("t-%d-%d" % (i, j),
                                               scope="r"))

        threads = [threading.Thread(target=work, args=(i,))
                   for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(16, len(results))
        self.assertEqual(16, len(set(results)))


class _FakeBackend(backend.LockBackend):
    """A lock service that can be told to fail."""

    description = "redis://fake:6379"

    def __init__(self):
        self.scope_error = None
        self.scope_held = False
        self.records = memory_records.MemoryRecords()

    @contextlib.contextmanager
    def scope_lock(self, name):
        if self.scope_error is not None:
            raise self.scope_error
        self.scope_held = True
        try:
            yield
        finally:
            self.scope_held = False


class TestFailClosed(LockTestCase):

    def setUp(self):
        super().setUp()
        self.driver = self.make_driver()
        self.fake = _FakeBackend()
        self.driver.backend = self.fake

    def _down(self):
        return exceptions.LockUnavailable(url=self.fake.description,
                                          reason="Connection refused")

    def test_unreachable_at_the_scope_lock(self):
        self.fake.scope_error = self._down()
        e = self.assertRaises(exceptions.LockUnavailable,
                              self.driver.allocate, "net-1", scope="r")
        self.assertIn("redis://fake:6379", str(e))
        self.assertEqual([], self.driver.list())

    def test_unreachable_while_reserving(self):
        self.fake.records.down(self.fake.description)
        self.assertRaises(exceptions.LockUnavailable, self.driver.allocate,
                          "net-1", scope="r")
        self.assertEqual([], self.driver.list())
        self.assertFalse(self.fake.scope_held)

    def test_an_index_that_cannot_be_written_holds_nothing(self):
        records = self.fake.records
        create = records.create

        def no_index(name, data, version, hold):
            if "-owner-" in name:
                raise self._down()
            return create(name, data, version, hold)

        records.create = no_index
        self.assertRaises(exceptions.LockUnavailable, self.driver.allocate,
                          "net-1", scope="r")
        self.assertEqual({}, records.data)
        self.assertEqual([], self.driver.list())

    def test_taken_failing_releases_the_reservation(self):
        calls = []

        def taken():
            calls.append(1)
            if len(calls) > 1:
                raise RuntimeError("neutron is down")
            return []

        self.assertRaises(RuntimeError, self.driver.allocate, "net-1",
                          scope="r", taken=taken)
        self.assertEqual({}, self.fake.records.data)
        self.assertEqual([], self.driver.list())

    def test_confirm_reports_a_lost_reservation(self):
        cidr = self.driver.allocate("net-1", scope="r")
        for name in self.fake.records.blocks():
            del self.fake.records.data[name]
        e = self.assertRaises(exceptions.ReservationLost,
                              self.driver.confirm, "net-1")
        self.assertIn(cidr, str(e))
        self.assertIn("expired", str(e))
        self.assertIsNone(self.driver.get("net-1"))
        self.assertFalse(self.driver.release("net-1"))

    def test_confirm_reports_a_reservation_it_cannot_check(self):
        self.driver.allocate("net-1", scope="r")
        self.fake.records.down(self.fake.description)
        e = self.assertRaises(exceptions.ReservationLost,
                              self.driver.confirm, "net-1")
        self.assertIn("could not be checked", str(e))
        self.assertIsNone(self.driver.get("net-1"))

    def test_a_release_while_the_service_is_down_fails_typed(self):
        self.driver.allocate("net-1", scope="r")
        self.fake.records.down(self.fake.description)
        self.assertRaises(exceptions.LockUnavailable, self.driver.release,
                          "net-2")

    def test_confirm_deletes_the_records_once(self):
        self.driver.allocate("net-1", scope="r")
        self.driver.confirm("net-1")
        self.driver.confirm("net-1")
        self.driver.confirm("unknown")
        self.assertEqual({}, self.fake.records.data)
        self.assertIsNone(self.driver.get("net-1"))
        self.assertFalse(self.driver.release("net-1"))


class TestCoordinationUrl(LockTestCase):

    def _build(self, url, **kwargs):
        self.config(coordination_url=url, lock_timeout=7, **kwargs)
        return self.make_driver()

    @mock.patch("tooz.coordination.get_coordinator")
    def test_lock_timeout_is_passed_to_the_backend(self, get):
        self._build("redis://127.0.0.1:6379")
        self.assertEqual(7, get.call_args.kwargs["lock_timeout"])
        self._build("zookeeper://127.0.0.1:2181")
        self.assertEqual(7, get.call_args.kwargs["timeout"])
        get.reset_mock()
        self._build("etcd3+http://127.0.0.1:2379")
        get.assert_not_called()  # etcd3: the records' own clients only
        self._build("redis://127.0.0.1:6379?lock_timeout=3")
        self.assertNotIn("lock_timeout", get.call_args.kwargs)
        self._build("file:///tmp/x")
        self.assertEqual({}, get.call_args.kwargs)

    def test_unknown_scheme(self):
        e = self.assertRaises(exceptions.InvalidConfig, self._build,
                              "bogus://somewhere")
        self.assertIn("coordination_url", str(e))
        self.assertIn("bogus", str(e))

    @mock.patch("tooz.coordination.get_coordinator",
                side_effect=ImportError("No module named 'kazoo'"))
    def test_missing_client_library(self, get):
        e = self.assertRaises(exceptions.InvalidConfig, self._build,
                              "zookeeper://127.0.0.1:2181")
        self.assertIn("kazoo", str(e))
        self.assertIn("pip install", str(e))

    def test_passwords_never_reach_messages(self):
        self.assertEqual("redis://:***@h:6379",
                         messages.safe_url("redis://:s3cret@h:6379"))
        self.assertEqual("redis://u:***@h:6379/0?db=1",
                         messages.safe_url("redis://u:s3cret@h:6379/0"
                                           "?db=1"))
        self.assertEqual("redis://h:6379",
                         messages.safe_url("redis://h:6379"))

    def test_unreachable_redis_fails_closed(self):
        # The coordinator cannot start: the server refuses (mocked, so
        # that redis-py's own backoff does not slow the test down).
        driver = self._build("redis://127.0.0.1:1?socket_connect_timeout=1")
        refused = redis.ConnectionError("Connection refused")
        with mock.patch("redis.Redis.info", side_effect=refused):
            e = self.assertRaises(exceptions.LockUnavailable,
                                  driver.allocate, "net-1", scope="r")
        self.assertIn("redis://127.0.0.1:1", str(e))
        self.assertEqual([], driver.list())


class TestToozFileContract(contract.StatefulContractTests, base.TestCase):
    """The contract again, through tooz's file backend (no service)."""

    driver_name = "lock"
    keeps_confirmed = False

    def prepare(self):
        self.config(coordination_url="file://" + os.path.join(
            self.state_path, "tooz"))
