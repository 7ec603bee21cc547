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

"""The ``lock`` driver under real concurrency: processes, threads and
a Redis that goes away (an engine killed: :mod:`.test_workers`).

Every engine plugs the subnet of each CIDR it is given into a model router
(the simulator's :class:`murano_cidr.measuring.simulate.router.ModelRouter`)
while it holds the reservation, and the router refuses, and records, any
overlap. The invariant checked is that it never had to.
"""

import collections
import os
import queue
import threading
import uuid

import netaddr
from oslo_config import cfg
from oslo_upgradecheck import upgradecheck
import tenacity

from murano_cidr import exceptions
from murano_cidr.measuring.simulate import router as router_mod
from murano_cidr.operator.drivers import commands
from murano_cidr.operator.drivers.lock import status_checks
from murano_cidr import opts
from murano_cidr.tests import base
from murano_cidr.tests.functional import history
from murano_cidr.tests.functional.lock import pifpaf_servers
from murano_cidr.tests.functional.lock import redis_server
from murano_cidr.tests.functional.lock import servers
from murano_cidr.tests.functional.lock import workers
from murano_cidr.tests.functional import runtimes

#: 64 candidate /24s: small enough that engines contend for them.
POOL = {"pool_cidrs": ["10.40.0.0/18"], "subnet_prefixlen": 24}
#: 8 candidate /24s, for the kill -9 tests.
SMALL_POOL = {"pool_cidrs": ["10.41.0.0/21"], "subnet_prefixlen": 24}
#: 64 aligned /23 blocks, for engines cutting /23s and /24s at once. Eight
#: engines hold at most five networks each; in the worst fragmentation
#: every one of those 40 sits in a block of its own, so the pool can never
#: run out (in the /18 above it could, depending on timing).
MIXED_POOL = {"pool_cidrs": ["10.42.0.0/17"]}
#: Seconds to wait for any process or condition; never reached when the
#: code is right.
DEADLINE = 120


def _until(condition, timeout=DEADLINE):
    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_delay(timeout),
        wait=tenacity.wait_fixed(0.1),
        retry=tenacity.retry_if_result(lambda ok: not ok))
    try:
        return retrying(condition)
    except tenacity.RetryError:
        return False


class EngineHarness(object):
    """Engines in processes, the model router, the checks (a mixin).

    :cvar runtime: what the engine processes run in
        (:mod:`~murano_cidr.tests.functional.runtimes`): plain, or
        patched by eventlet as Murano's engine is.
    """

    #: ``[cidr_allocator]`` options of the backend under test.
    backend = None
    runtime = runtimes.PLAIN

    def setUp(self):
        super().setUp()
        self.spawn = runtimes.get_context(self.runtime)
        self.lock_path = os.path.join(self.state_path, "locks")
        self.router_path = os.path.join(self.state_path, "routers.sqlite")
        self.router = "router-%s" % uuid.uuid4().hex
        self.routers = router_mod.ModelRouter.create(self.router_path)
        self.addCleanup(self.routers.close)
        # Every engine records its calls here (history.Recorder).
        self.history_dir = os.path.join(self.state_path, "history")
        os.mkdir(self.history_dir)

    def settings(self, pool=POOL, **extra):
        result = {"driver": "lock"}
        result.update(pool)
        result.update(self.backend or {})
        result.update(extra)
        return result

    def allocates(self, driver, owner):
        """Tell whether ``owner`` gets a CIDR in the test's router now.

        :returns: False if the lock service is unavailable.
        """
        try:
            driver.allocate(owner, scope=self.router)
        except exceptions.LockUnavailable:
            return False
        return True

    def allocator(self, **settings):
        driver = workers.build_allocator(self.settings(**settings),
                                         self.lock_path)
        self.addCleanup(driver.close)
        return driver

    def assertStatusCheckSucceeds(self, url):
        """``murano-cidr-status upgrade check`` succeeds on ``url``."""
        conf = cfg.ConfigOpts()
        commands.register_opts(conf)
        conf([], project="murano-cidr", default_config_files=[])
        conf.set_override("coordination_url", url, group=opts.GROUP)
        result = status_checks.check_lock_service(conf)
        self.assertEqual(upgradecheck.Code.SUCCESS, result.code,
                         result.details)

    def servers_log(self):
        """Return what the servers logged last, for failure messages."""
        return ""

    def progress(self, networks):
        """Wait until ``networks`` more subnets were plugged."""
        before = self.routers.added(self.router)
        self.assertTrue(_until(
            lambda: self.routers.added(self.router) >= before + networks),
            "the engines plugged fewer than %d subnets in %d s\n%s"
            % (networks, DEADLINE, self.servers_log()))

    def start(self, target, *args):
        process = self.spawn.Process(target=target, args=args, daemon=True)
        process.start()
        self.addCleanup(self._reap, process)
        return process

    def _reap(self, process):
        if process.is_alive():
            redis_server.kill_and_reap(process)

    def start_engines(self, processes, count, keep, settings=None):
        results = self.spawn.Queue()
        engines = [self.start(workers.engine,
                              settings or self.settings(), self.lock_path,
                              self.router_path, self.router, "e%d" % i,
                              count, keep, results, self.history_dir)
                   for i in range(processes)]
        return engines, results

    def collect_reports(self, engines, results):
        """Wait for each engine's report and its clean exit; return them."""
        reports = []
        for _ in engines:
            try:
                reports.append(results.get(timeout=DEADLINE))
            except queue.Empty:
                self.fail("an engine did not report within %d s" % DEADLINE)
        for process in engines:
            process.join(timeout=DEADLINE)
            self.assertEqual(0, process.exitcode)
        return reports

    def finish_engines(self, engines, results, count):
        """Wait for the engines and check each deployed ``count``."""
        reports = self.collect_reports(engines, results)
        for report in reports:
            self.assertEqual(count, report.get("deployed", 0), report)
            self.assertEqual(self.runtime, report["runtime"], report)
        return reports

    def assertNeverCollided(self, reports=(), allowed_errors=()):
        """Check the model router and the engines' recorded history.

        The history holds when no call raised an untyped error or a typed
        one other than the lock service being unavailable, a lost
        reservation and ``allowed_errors``, and no two owners of the scope
        held overlapping CIDRs at any moment. Engines allocate and release
        in the scope at the same time, so only the overlaps that must have
        happened count (the checker's non-strict reading).
        """
        allowed = {"LockUnavailable", "ReservationLost"} | set(allowed_errors)
        self.assertEqual([], [str(v) for v in history.check(
            history.load(self.history_dir), strict=False,
            allowed_errors=allowed)])
        self.assertEqual([], self.routers.refusals())
        self.assertEqual(0, sum(r.get("collisions", 0) for r in reports))
        nets = sorted(netaddr.IPNetwork(c)
                      for c in self.routers.cidrs(self.router))
        for a, b in zip(nets, nets[1:]):
            self.assertLess(a.last, b.first)


class ScenarioTests(EngineHarness):
    """What every backend must survive (a mixin)."""

    def test_4_processes_40_deployments_each(self):
        # NOTE: four engines on CI's two cores contend for every lock as
        # eight did, in half the time.
        engines, results = self.start_engines(4, 40, keep=4)
        reports = self.finish_engines(engines, results, 40)
        self.assertNeverCollided(reports)
        self.assertEqual(160, self.routers.added(self.router))

    def test_engines_cutting_different_subnet_sizes(self):
        # A rolling change of subnet_prefixlen: half the engines cut /24s
        # and half /23s from one pool for one router; the reservation
        # blocks make them exclude each other all the same.
        results = self.spawn.Queue()
        engines = [self.start(workers.engine,
                              self.settings(MIXED_POOL,
                                            subnet_prefixlen=23 + i % 2),
                              self.lock_path, self.router_path, self.router,
                              "e%d" % i, 25, 4, results, self.history_dir)
                   for i in range(4)]
        reports = self.finish_engines(engines, results, 25)
        self.assertNeverCollided(reports)
        self.assertEqual({23, 24}, {netaddr.IPNetwork(c).prefixlen
                                    for c in self.routers.cidrs(self.router)})

    def test_16_threads_share_one_allocator(self):
        driver = self.allocator()
        counters = collections.Counter()
        errors = []
        barrier = threading.Barrier(16)
        lock = threading.Lock()

        def thread(i):
            routers = router_mod.ModelRouter(self.router_path)
            mine = collections.Counter()
            try:
                barrier.wait()
                workers.deploy(driver, routers, self.router, "t%d" % i, 25,
                               2, mine)
            except Exception as e:
                errors.append(e)
            finally:
                routers.close()
                with lock:
                    counters.update(mine)

        threads = [threading.Thread(target=thread, args=(i,))
                   for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=DEADLINE)
        self.assertEqual([], errors)
        self.assertNeverCollided()
        self.assertEqual(0, counters["collisions"])
        self.assertEqual(16 * 25, counters["deployed"])


class TestFileLocks(ScenarioTests, base.TestCase):
    """oslo.concurrency file locks: the engines of one host."""

    backend = {}


class TestRedisLocks(ScenarioTests, base.TestCase):
    """tooz locks on Redis (pifpaf's): engines on many hosts."""

    def setUp(self):
        super().setUp()
        server = pifpaf_servers.RedisServer()
        self.require_service(server.available,
                             "pifpaf and the redis-server binary")
        self.useFixture(server)
        self.backend = {"coordination_url": server.url}


class TestRedisOutage(EngineHarness, base.TestCase):
    """A Redis of the test's own, stopped and started while engines run."""

    def setUp(self):
        super().setUp()
        self.server = servers.RedisServer()
        self.require_service(self.server.available,
                             "the redis-server binary")
        self.useFixture(self.server)

    def test_redis_stopped_mid_run(self):
        # Locks outlive the outage: the server keeps them in its
        # append-only file, and the outage lasts about a second, far less
        # than what is left of a lock's timeout when it starts (at least
        # half of it, 10 s: locks are refreshed twice per timeout), even on
        # a loaded machine. A lock whose release failed during the outage
        # lingers for its timeout.
        settings = self.settings(coordination_url=self.server.url,
                                 lock_timeout=20)
        driver = self.allocator(coordination_url=self.server.url,
                                lock_timeout=20)
        driver.allocate("p-1", scope=self.router)
        driver.confirm("p-1")
        engines, results = self.start_engines(4, 60, keep=3,
                                              settings=settings)
        self.assertTrue(_until(
            lambda: self.routers.added(self.router) >= 20))
        held = driver.allocate("p-held", scope=self.router)

        self.server.stop()
        e = self.assertRaises(exceptions.LockUnavailable, driver.allocate,
                              "p-2", scope=self.router)
        self.assertIn(self.server.url, str(e))
        self.assertIsNone(driver.get("p-2"))
        e = self.assertRaises(exceptions.ReservationLost, driver.confirm,
                              "p-held")
        self.assertIn(held, str(e))

        self.server.start()
        self.assertTrue(_until(lambda: self.allocates(driver, "p-3")),
                        "allocations did not resume after the restart")
        reports = self.finish_engines(engines, results, 60)
        self.assertNeverCollided(reports)
