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

"""The db driver on a 3-node Galera cluster, engines spread over the nodes.

Every call of every engine process is recorded and the whole history
checked (:mod:`murano_cidr.tests.functional.history`): no two live
allocations of the scope overlap, no owner holds two CIDRs, errors are
typed, and the database holds what the calls said. One cluster serves the
whole class (it takes ~15 s to start); each test has a database of its own.
"""

import queue
import statistics
import time

import fixtures
import sqlalchemy as sa
from testtools import content

from murano_cidr.tests import base as tests_base
from murano_cidr.tests.functional.db import base
from murano_cidr.tests.functional.db import galera
from murano_cidr.tests.functional.db import workers
from murano_cidr.tests.functional import history

SCOPE = "router-1"
NODES = (1, 2, 3)
WORKERS_PER_NODE = 2
#: The node the node-loss test kills.
VICTIM = 3


class GaleraBackend(object):
    """A database of the test's own on the class's Galera cluster."""

    backend = "galera"
    _cluster = None
    _cluster_error = None

    @classmethod
    def cluster(cls):
        """Start the cluster once for the class; later tests reuse it."""
        if cls._cluster_error is not None:
            raise cls._cluster_error
        if GaleraBackend._cluster is None:
            cluster = galera.GaleraCluster()
            try:
                cluster.setUp()
            except Exception as e:
                cls._cluster_error = e
                raise
            GaleraBackend._cluster = cluster
            cls.addClassCleanup(cls._stop_cluster)
        return GaleraBackend._cluster

    @staticmethod
    def _stop_cluster():
        cluster, GaleraBackend._cluster = GaleraBackend._cluster, None
        cluster.cleanUp()

    def setUp(self):
        reason = galera.missing()
        if reason is not None:
            if tests_base.services_required():
                self.fail("a Galera cluster is required in CI but this "
                          "machine lacks %s" % reason)
            self.skipTest("a Galera cluster needs %s" % reason)
        self.galera = self.cluster()
        self.addOnException(lambda exc_info: self.addDetail(
            "galera", content.text_content("\n\n".join(
                node.state() for node in self.galera.nodes
                if node.running))))
        for node in self.galera.nodes:
            if not node.running:  # a test before this one failed
                self.galera.start(node.number)
        self.database = self.galera.database()
        self.url = self.galera.url(1, self.database)
        self.engine = sa.create_engine(self.url, poolclass=sa.pool.NullPool)
        self.addCleanup(self.engine.dispose)
        super().setUp()


class TestGalera(GaleraBackend, base.DbTestCase):

    def setUp(self):
        super().setUp()
        self.sync()
        self.directory = self.useFixture(fixtures.TempDir()).path

    def final(self):
        """What the database holds at the end, read on node 1."""
        driver = self.make_driver()
        return {a.owner: a.cidr for a in driver.list(SCOPE)}

    def spread(self, *args):
        """Worker arguments: two engine processes on each node."""
        return [(self.galera.url(node, self.database), dict(
            self.pool_settings), SCOPE, "node%d-w%d" % (node, n),
            self.directory) + args
            for node in NODES for n in range(WORKERS_PER_NODE)]

    def conflicts(self):
        """Count the transactions replication aborted, per node.

        Certification failures and brute-force aborts, from Galera's status.
        """
        return [sum(int(node.status(name)) for name in (
            "wsrep_local_cert_failures", "wsrep_local_bf_aborts"))
            for node in self.galera.nodes]

    def test_allocation_spread_over_nodes(self):
        conflicts = self.conflicts()
        self.run_workers(workers.allocate_recorded, self.spread(40, 4))
        conflicts = [b - a for a, b in zip(conflicts, self.conflicts())]
        ops = history.load(self.directory)
        final = self.final()
        self.assertEqual([], history.check(ops, strict=False, final=final,
                                           allowed_errors=()))
        by_kind = {kind: [op for op in ops if op.kind == kind]
                   for kind in (history.ALLOCATE, history.RELEASE)}
        self.assertEqual(240, len(by_kind[history.ALLOCATE]))
        self.assertEqual(60, len(by_kind[history.RELEASE]))
        self.assertEqual(180, len(final))
        self.assertEqual(
            {"node%d" % n for n in NODES},
            {op.process.split("-")[0] for op in by_kind[history.ALLOCATE]})
        # Measured, not asserted: how often Galera made the driver retry.
        took = sorted(op.end - op.start for op in by_kind[history.ALLOCATE])
        self.addDetail("timings", content.text_content(
            "%d write transactions; %s aborted by replication on nodes "
            "1, 2, 3 (each retried); allocate: median %.1f ms, 90th "
            "percentile %.1f ms, longest %.1f ms\n" % (
                len(ops), conflicts, took[len(took) // 2] / 1e6,
                took[len(took) * 9 // 10] / 1e6, took[-1] / 1e6)))

    def test_exhaustion(self):
        # 32 candidates, 48 owners, nothing released.
        self.pool_settings = dict(self.pool_settings,
                                  pool_cidrs=["10.0.0.0/19"])
        self.run_workers(workers.allocate_recorded, self.spread(8, 0))
        ops = history.load(self.directory)
        final = self.final()
        self.assertEqual([], history.check(
            ops, final=final, allowed_errors={"PoolExhausted"}))
        allocates = [op for op in ops if op.kind == history.ALLOCATE]
        self.assertEqual(
            {history.OK: 32, history.FAIL: 16},
            {status: len([op for op in allocates if op.status == status])
             for status in (history.OK, history.FAIL)})
        self.assertEqual(32, len(final))

    def test_node_killed_mid_run(self):
        self.pool_settings = dict(self.pool_settings,
                                  pool_cidrs=["10.0.0.0/8"])
        context = self.worker_context()
        progress = context.Queue()
        killed = context.Event()
        restarted = context.Event()
        # A call on the dead node fails only after its retries (at most
        # call_timeout): one each while it is down.
        args = self.spread((10, 1, 10), progress, killed, restarted)
        args = [a[:2] + ({},) + a[2:] for a in args]
        processes, results = self.start_workers(
            workers.allocate_through_failure, args)

        self.wait_for_phase(progress, "ready", len(args))
        kill_from = time.monotonic_ns()
        self.galera.kill(VICTIM)
        down_from = time.monotonic_ns()
        killed.set()
        self.wait_for_phase(progress, "down", len(args))
        down_until = time.monotonic_ns()
        self.galera.start(VICTIM)
        up_from = time.monotonic_ns()
        restarted.set()
        self.collect_workers(processes, results)

        ops = history.load(self.directory)
        self.assertEqual([], history.check(
            ops, strict=False, final=self.final(),
            allowed_errors={"BackendUnavailable"}))
        victim = "node%d-" % VICTIM
        # The calls on the other nodes went on, while the victim was down
        # too, and none failed.
        others = [op for op in ops if not op.process.startswith(victim)]
        self.assertEqual([], [str(op) for op in others
                              if op.status != history.OK])
        self.assertTrue([op for op in others
                         if down_from < op.start and op.end < down_until])
        # The calls on the dead node ended in typed errors.
        dead = [op for op in ops if op.process.startswith(victim)
                and down_from < op.start and op.end < down_until]
        self.assertTrue(dead)
        self.assertEqual([], [str(op) for op in dead
                              if "BackendUnavailable" not in op.errors])
        # Once it rejoined, every call succeeded, on every node.
        after = [op for op in ops if op.start > up_from]
        self.assertEqual([], [str(op) for op in after
                              if op.status != history.OK])
        self.assertTrue([op for op in after if op.process.startswith(victim)
                         and op.kind == history.ALLOCATE])
        # Measured, not asserted: what a node loss costs the callers.
        stalled = [op.end - op.start for op in others
                   if op.start < down_from and op.end > kill_from]
        self.addDetail("timings", content.text_content(
            "eviction of the killed node: %.1f s; longest call on the "
            "other nodes meanwhile: %.1f s; a call on the dead node failed "
            "after %.1f s (median); rejoin: %.1f s\n" % (
                (down_from - kill_from) / 1e9, max(stalled or [0]) / 1e9,
                statistics.median(op.end - op.start for op in dead) / 1e9,
                (up_from - down_until) / 1e9)))

    def wait_for_phase(self, progress, phase, count):
        """Wait until ``count`` workers told ``progress`` of ``phase``."""
        for _ in range(count):
            try:
                name, reached = progress.get(timeout=base.WORKER_TIMEOUT)
            except queue.Empty:
                self.fail("the workers did not reach %r within %d s"
                          % (phase, base.WORKER_TIMEOUT))
            self.assertEqual(phase, reached, name)
