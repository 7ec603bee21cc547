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
worker: its CIDR comes back once ``reservation_timeout`` has passed.

The workers run plain and patched by eventlet as Murano's engine is
(:mod:`~murano_cidr.tests.functional.runtimes`), both in CI: the failed
deployment's CIDR comes back by the holding worker's timer, a green
thread in a patched worker.
"""

import time

from oslo_log import log as logging

from murano_cidr.tests import base
from murano_cidr.tests.functional import history
from murano_cidr.tests.functional.lock import servers
from murano_cidr.tests.functional.lock import test_faults
from murano_cidr.tests.functional.lock import test_lock_driver as harness
from murano_cidr.tests.functional import runtimes

#: Four /24s: the whole pool is deployed in each cycle.
POOL = {"pool_cidrs": ["10.43.0.0/22"], "subnet_prefixlen": 24}
#: Seconds any call may take (its bound is lock_timeout, 10 s at most).
WATCHDOG = 60
#: The workers' reservation_timeout in the failed deployment's test.
TIMEOUT = 2

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
        "test_a_failed_deploy_deleted_elsewhere_ends_after_the_timeout"))

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

    def test_a_failed_deploy_deleted_elsewhere_ends_after_the_timeout(self):
        # Its stack push failed: allocated in one worker, never confirmed,
        # deleted in the other, which has nothing to drop. The allocating
        # worker, asked nothing more, drops its lock once the timeout has
        # passed, and the other worker is then given the CIDR.
        holder, other = [test_faults.Remote(self, "w%d" % i,
                                            reservation_timeout=TIMEOUT,
                                            **POOL)
                         for i in range(2)]
        for i in range(3):
            other.expect(history.ALLOCATE, "net-%d" % i, WATCHDOG)
            other.expect(history.CONFIRM, "net-%d" % i, WATCHDOG)
        started = time.monotonic()
        cidr = holder.expect(history.ALLOCATE, "failed", WATCHDOG)["value"]
        self.assertFalse(
            other.expect(history.RELEASE, "failed", WATCHDOG)["value"])
        on_router = self.routers.cidrs(self.router)
        self.assertEqual(3, len(on_router))
        self.assertNotIn(cidr, on_router)
        reply = other.call(history.ALLOCATE, "next", WATCHDOG)
        if time.monotonic() < started + TIMEOUT:
            # Answered before the timeout could have passed: nothing was
            # freed by the release.
            self.assertEqual((history.FAIL, "PoolExhausted"),
                             (reply["status"], reply["error"]), reply)
        else:
            LOG.warning("%s: the machine is too slow to see the "
                        "reservation held before its timeout", self.id())
        deadline = time.monotonic() + WATCHDOG
        while reply["status"] != history.OK:
            self.assertEqual("PoolExhausted", reply["error"], reply)
            self.assertLess(time.monotonic(), deadline,
                            "the reservation was not dropped within %d s "
                            "of its %d s timeout" % (WATCHDOG, TIMEOUT))
            reply = other.call(history.ALLOCATE, "next", WATCHDOG,
                               pause=0.1)
        self.assertEqual(cidr, reply["value"])
        # The holder no longer holds it: asked again for the same owner,
        # it finds every CIDR on the router.
        holder.expect(history.ALLOCATE, "failed", WATCHDOG,
                      error="PoolExhausted")
        self.assertNeverCollided(allowed_errors={"PoolExhausted"})


class TestFileLockWorkers(WorkerTests, base.TestCase):
    """Workers of one host, on file locks."""


class TestRedisWorkers(WorkerTests, base.TestCase):
    server_class = servers.RedisServer


class TestEtcdWorkers(WorkerTests, base.TestCase):
    server_class = servers.EtcdServer


class TestZooKeeperWorkers(WorkerTests, base.TestCase):
    server_class = servers.ZooKeeperServer
