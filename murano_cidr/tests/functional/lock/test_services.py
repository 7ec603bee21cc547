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

"""The ``lock`` driver on an etcd member and a ZooKeeper server of the
tests' own: engines in processes, exhaustion, and the server killed with
SIGKILL while the engines run, then started again.

The servers come from pifpaf (:mod:`.pifpaf_servers`), as in tooz's own
CI, except for the tests that kill a server and start it again, which
pifpaf cannot do (:mod:`.servers`). One server serves every test of a
class (a JVM takes a while to start); each test uses a router (scope) of
its own, so the tests never share a lock.
"""

import threading

import fixtures
from tooz import coordination

from murano_cidr.engine.drivers.lock import picking
from murano_cidr import exceptions
from murano_cidr.tests import base
from murano_cidr.tests.functional import history
from murano_cidr.tests.functional.lock import pifpaf_servers
from murano_cidr.tests.functional.lock import servers
from murano_cidr.tests.functional.lock import test_lock_driver as harness
from murano_cidr.tests.functional.lock import workers

#: Seconds a lock (ZooKeeper: a session) survives without its holder:
#: short, so that an outage ends the sessions and leases within a test.
LOCK_TIMEOUT = 5
#: Seconds a test may run at most: a call that is not bounded fails its
#: test at this point instead of hanging the run.
TEST_TIMEOUT = 240
#: Seconds ``close()`` may take at most, even with the server down.
CLOSE_TIMEOUT = 60


class ServerPerClass(harness.EngineHarness):
    """One server fixture for the tests of a class (a mixin).

    :cvar server_class: the server's fixture class.
    """

    server_class = None
    server = None

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        server = cls.server_class()
        if server.available:
            server.setUp()
            cls.server = server

    @classmethod
    def tearDownClass(cls):
        if cls.server is not None:
            cls.server.cleanUp()
            cls.server = None
        super().tearDownClass()

    def setUp(self):
        super().setUp()
        self.require_service(self.server is not None,
                             "the %s server (%s)" % (
                                 self.server_class.name,
                                 self.server_class.__doc__.split("\n")[0]))
        if getattr(self.server, "process", True) is None:
            # A test that failed with the server killed left it so.
            self.server.start()
        self.useFixture(fixtures.Timeout(TEST_TIMEOUT, gentle=True))
        self.backend = {"coordination_url": self.server.url,
                        "lock_timeout": LOCK_TIMEOUT}

    def allocator(self, **settings):
        driver = workers.build_allocator(self.settings(**settings),
                                         self.lock_path)
        self.addCleanup(self.assertCloses, driver)
        return driver

    def assertCloses(self, driver):
        """Close ``driver`` and check that close() returns."""
        # NOTE: in a thread, so that a close() that hangs fails this test
        # instead of hanging the whole run.
        closing = threading.Thread(target=driver.close, daemon=True)
        closing.start()
        closing.join(CLOSE_TIMEOUT)
        self.assertFalse(closing.is_alive(),
                         "close() did not return within %d s" % CLOSE_TIMEOUT)


class ServiceScenarios(ServerPerClass):
    """What the lock driver must do on a lock service (a mixin)."""

    def test_processes_share_one_scope(self):
        engines, results = self.start_engines(4, 25, keep=3)
        reports = self.finish_engines(engines, results, 25)
        self.assertNeverCollided(reports)
        self.assertEqual(100, self.routers.added(self.router))

    def test_exhaustion_across_processes(self):
        settings = self.settings(pool=harness.SMALL_POOL)
        reported = self.spawn.Queue()
        self.start(workers.holder, settings, self.lock_path, self.router,
                   "other", 4, reported)
        theirs = set(reported.get(timeout=harness.DEADLINE))
        driver = self.allocator(pool=harness.SMALL_POOL)
        mine = {driver.allocate("mine-%d" % i, scope=self.router)
                for i in range(4)}
        self.assertEqual(set(), mine & theirs)
        e = self.assertRaises(exceptions.PoolExhausted, driver.allocate,
                              "one-too-many", scope=self.router)
        self.assertIn("8 subnets", str(e))
        self.assertIsNone(driver.get("one-too-many"))
        driver.release("mine-0")
        self.assertIn(driver.allocate("again", scope=self.router), mine)

    def test_a_pick_in_progress_elsewhere(self):
        # Another engine holds the scope lock, as while it picks.
        coordinator = coordination.get_coordinator(
            self.server.url, b"murano-cidr-test-holder")
        coordinator.start(start_heart=True)
        self.addCleanup(coordinator.stop)
        lock = coordinator.get_lock(
            picking.scope_lock_name(self.router).encode("utf-8"))
        self.assertTrue(lock.acquire(blocking=False))
        self.addCleanup(lock.release)
        driver = self.allocator(lock_wait_timeout=1)
        if self.serialises:
            e = self.assertRaises(exceptions.LockUnavailable,
                                  driver.allocate, "net-1",
                                  scope=self.router)
            self.assertIn("lock_wait_timeout", str(e))
        else:
            self.assertIsNotNone(driver.allocate("net-1", scope=self.router))


class OutageScenarios(ServerPerClass):
    """What the lock driver must survive: its server killed (a mixin)."""

    def _unavailable_to(self):
        """The engines a call of which failed with LockUnavailable."""
        return {op.process for op in history.load(self.history_dir)
                if op.status == history.FAIL
                and "LockUnavailable" in op.errors}

    def test_server_killed_mid_run(self):
        settings = self.settings()
        driver = self.allocator()
        engines, results = self.start_engines(4, 40, keep=3,
                                              settings=settings)
        self.assertTrue(harness._until(
            lambda: self.routers.added(self.router) >= 20))
        held = driver.allocate("p-held", scope=self.router)
        other = self.allocator()
        other.allocate("p-other", scope=self.router)

        self.server.kill()
        # Every call ends in a typed error, within the test's timeout.
        e = self.assertRaises(exceptions.LockUnavailable, driver.allocate,
                              "p-down", scope=self.router)
        self.assertIn(self.server.url, str(e))
        self.assertNotEqual("", e.kwargs["reason"].strip())
        self.assertIsNone(driver.get("p-down"))
        e = self.assertRaises(exceptions.ReservationLost, driver.confirm,
                              "p-held")
        self.assertIn(held, str(e))
        self.assertIsNone(driver.get("p-held"))
        self.assertCloses(other)
        # Keep the server down until every engine met the outage.
        self.assertTrue(harness._until(
            lambda: self._unavailable_to() == {"e0", "e1", "e2", "e3"}),
            "not every engine met the outage: only %s"
            % sorted(self._unavailable_to()))

        self.server.start()
        self.assertTrue(harness._until(
            lambda: self.allocates(driver, "p-back")),
            "allocations did not resume after the restart")
        reports = self.finish_engines(engines, results, 40)
        self.assertNeverCollided(reports)


class TestZooKeeper(ServiceScenarios, base.TestCase):
    """tooz locks on ZooKeeper (kazoo), pifpaf's server."""

    server_class = pifpaf_servers.ZooKeeperServer
    #: ZooKeeper queues the waiters of a lock: engines wait for the scope
    #: lock while another picks.
    serialises = True


class TestEtcd(ServiceScenarios, base.TestCase):
    """tooz locks on etcd (etcd3gw), pifpaf's server."""

    server_class = pifpaf_servers.EtcdServer
    #: tooz polls etcd3 locks: engines do not wait for each other.
    serialises = False


class TestZooKeeperKilled(OutageScenarios, base.TestCase):
    """ZooKeeper killed with SIGKILL and started again."""

    server_class = servers.ZooKeeperServer


class TestEtcdKilled(OutageScenarios, base.TestCase):
    """etcd killed with SIGKILL and started again."""

    server_class = servers.EtcdServer
