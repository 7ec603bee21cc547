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

"""Many engine worker processes are one engine.

Murano runs ``[engine] engine_workers`` processes and its message queue
hands each task to any of them: a deployment allocates and confirms in one
worker, its delete runs in another. Two worker processes here
(:func:`.workers.serve`, each reading and plugging the model router) take
turns: one deploys the whole pool on one router, the other deletes it, and
again, so that a CIDR any worker kept after its delete would exhaust the
pool. A deployment that failed before its confirm is deleted in the other
worker: its CIDR comes back at once. A worker killed between its
allocate and its confirm leaves its reservation in the lock service:
held for ``reservation_timeout``, then handed out again only once the
router shows no subnet overlapping it.

The workers run plain and patched by eventlet as Murano's engine is
(:mod:`~murano_cidr.tests.functional.runtimes`), both in CI.
"""

import threading
import time

from oslo_log import log as logging

from murano_cidr.tests import base
from murano_cidr.tests.functional import history
from murano_cidr.tests.functional.lock import redis_server
from murano_cidr.tests.functional.lock import servers
from murano_cidr.tests.functional.lock import test_faults
from murano_cidr.tests.functional.lock import test_lock_driver as harness
from murano_cidr.tests.functional import runtimes

#: Four /24s: the whole pool is deployed in each cycle.
POOL = {"pool_cidrs": ["10.43.0.0/22"], "subnet_prefixlen": 24}
#: Seconds any call may take (its bound is lock_timeout, 10 s at most).
WATCHDOG = 60
#: The workers' reservation_timeout in the dead engine's test, seconds.
HOLD = 4

LOG = logging.getLogger(__name__)

load_tests = runtimes.load_tests


class WorkerTests(harness.EngineHarness):
    """Two workers, one router (a mixin).

    :cvar server_class: a :class:`~.servers.LocalServer` to start, or None
        for file locks.
    """

    scenarios = runtimes.SCENARIOS
    server_class = None
    patched_in_ci = frozenset((
        "test_a_delete_in_another_worker_frees_the_cidr",
        "test_a_failed_deploy_deleted_elsewhere_frees_its_cidr_at_once",
        "test_a_dead_engine_s_reservation_outlives_it"))

    def setUp(self):
        super().setUp()
        if self.server_class is not None:
            server = self.server_class()
            self.require_service(server.available,
                                 "the %s server" % server.name)
            self.useFixture(server)
            self.backend = {"coordination_url": server.url}

    def test_a_delete_in_another_worker_frees_the_cidr(self):
        workers = [test_faults.Remote(self, "w%d" % i, **POOL)
                   for i in range(2)]
        for cycle in range(3):
            deploy, delete = workers[cycle % 2], workers[1 - cycle % 2]
            owners = ["net-%d-%d" % (cycle, i) for i in range(4)]
            for owner in owners:
                deploy.expect(history.ALLOCATE, owner, WATCHDOG)
                deploy.expect(history.CONFIRM, owner, WATCHDOG)
            self.assertEqual(4, len(self.routers.cidrs(self.router)))
            for owner in owners:
                self.assertFalse(
                    delete.expect(history.RELEASE, owner, WATCHDOG)["value"])
            self.assertEqual([], self.routers.cidrs(self.router))
        self.assertNeverCollided()

    def test_a_failed_deploy_deleted_elsewhere_frees_its_cidr_at_once(self):
        # Issue 34: its stack push failed: allocated in one worker, never
        # confirmed, deleted in the other. The delete frees the CIDR for
        # every engine at once (the allocating worker, asked nothing more,
        # would hold it for reservation_timeout, two hours here).
        holder, other = [test_faults.Remote(self, "w%d" % i, **POOL)
                         for i in range(2)]
        for i in range(3):
            other.expect(history.ALLOCATE, "net-%d" % i, WATCHDOG)
            other.expect(history.CONFIRM, "net-%d" % i, WATCHDOG)
        cidr = holder.expect(history.ALLOCATE, "failed", WATCHDOG)["value"]
        self.assertTrue(
            other.expect(history.RELEASE, "failed", WATCHDOG)["value"])
        self.assertNotIn(cidr, self.routers.cidrs(self.router))
        self.assertEqual(
            cidr, other.expect(history.ALLOCATE, "next", WATCHDOG)["value"])
        # The allocating worker learns it at its confirm.
        holder.expect(history.CONFIRM, "failed", WATCHDOG,
                      error="ReservationLost")
        self.assertNeverCollided(allowed_errors={"ReservationLost"})

    def test_a_dead_engine_s_reservation_outlives_it(self):
        # Issue 34: an engine dies (SIGKILL) after its stack push started,
        # before its confirm: Heat may still create the subnet. Its
        # reservation is held for reservation_timeout (HOLD), then freed
        # only once the router shows no subnet overlapping it.
        # NOTE: locks and sessions end after lock_timeout, well before
        # HOLD: the reservation must not end with them.
        dying, other = [test_faults.Remote(self, "w%d" % i,
                                           reservation_timeout=HOLD,
                                           lock_timeout=2, **POOL)
                        for i in range(2)]
        for i in range(3):
            other.expect(history.ALLOCATE, "net-%d" % i, WATCHDOG)
            other.expect(history.CONFIRM, "net-%d" % i, WATCHDOG)
        started = time.time()
        cidr = dying.expect(history.ALLOCATE, "dying", WATCHDOG)["value"]
        redis_server.kill_and_reap(dying.process)
        # The model router has the subnet the worker plugged at once; Heat
        # has not created it yet.
        self.routers.remove_interface("dying")
        # Held, by the dead engine's record, until its timeout.
        polls = 0
        while time.time() < started + HOLD - 1 or not polls:
            reply = other.expect(history.ALLOCATE, "next", WATCHDOG,
                                 error="PoolExhausted", pause=0.2 * polls)
            if time.time() < started + HOLD:
                self.assertIn("1 held by unconfirmed reservations (0 by "
                              "this engine process)", reply["message"])
            else:
                LOG.warning("%s: the machine is too slow to see the "
                            "reservation held before its timeout", self.id())
            polls += 1
        # Heat creates the subnet late: past the timeout, the router alone
        # keeps the CIDR from the other engines.
        self.routers.add_interface(self.router, "heat", cidr)
        threading.Event().wait(max(0.0, started + HOLD - time.time()))
        other.expect(history.ALLOCATE, "next", WATCHDOG,
                     error="PoolExhausted")
        # Once the subnet is gone, the CIDR is handed out again.
        self.routers.remove_interface("heat")
        deadline = time.monotonic() + WATCHDOG
        reply = other.call(history.ALLOCATE, "next", WATCHDOG)
        while reply["status"] != history.OK:
            self.assertEqual("PoolExhausted", reply["error"], reply)
            self.assertLess(time.monotonic(), deadline,
                            "the reservation was not dropped within %d s "
                            "of its %d s timeout" % (WATCHDOG, HOLD))
            reply = other.call(history.ALLOCATE, "next", WATCHDOG,
                               pause=0.2)
        self.assertEqual(cidr, reply["value"])
        # The dead engine's reservation ended at its timeout, which the
        # history cannot tell: the other calls hold, and the router never
        # refused a subnet.
        ops = [op for op in history.load(self.history_dir)
               if op.owner != "dying"]
        self.assertEqual([], [str(v) for v in history.check(
            ops, strict=False, allowed_errors={"PoolExhausted"})])
        self.assertEqual([], self.routers.refusals())


class TestFileLockWorkers(WorkerTests, base.TestCase):
    """Workers of one host, on file locks."""


class TestRedisWorkers(WorkerTests, base.TestCase):
    server_class = servers.RedisServer


class TestEtcdWorkers(WorkerTests, base.TestCase):
    server_class = servers.EtcdServer


class TestZooKeeperWorkers(WorkerTests, base.TestCase):
    server_class = servers.ZooKeeperServer
