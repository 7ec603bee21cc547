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

"""The ``lock`` driver on a three-member etcd cluster of the test's own
(:mod:`.etcd_cluster`), the URL naming every member.

Engine processes allocate in one scope while a member is SIGKILLed:

* the first member the URL names (a follower): every call goes on, on
  the next member; no call fails, no reservation is lost, and
  ``murano-cidr-status upgrade check`` still succeeds;
* the leader (the URL naming a follower first): the calls in flight
  while the cluster elects a new one end, typed, within the watchdog.

No two engines may hold one CIDR (the history checker) in either. Both
run their engines plain and patched by eventlet as Murano's engine is
(:mod:`~murano_cidr.tests.functional.runtimes`); CI runs the first
member killed in both, the leader killed patched only with
``MURANO_CIDR_ALL_FAULTS=1``. The figures of
``doc/source/admin/lock-services.rst`` are these runs'.
"""

import json
import time

import fixtures
from oslo_log import log as logging
import testtools

from murano_cidr.tests import base
from murano_cidr.tests.functional import history
from murano_cidr.tests.functional.lock import etcd_cluster
from murano_cidr.tests.functional.lock import test_faults
from murano_cidr.tests.functional.lock import test_lock_driver as harness
from murano_cidr.tests.functional.lock import test_sentinel
from murano_cidr.tests.functional.lock import workers
from murano_cidr.tests.functional import runtimes

LOG = logging.getLogger(__name__)

#: Seconds a test may run at most, whatever happens.
TEST_TIMEOUT = 300

load_tests = runtimes.load_tests


class ClusterEngines(harness.EngineHarness):
    """Engines allocating while servers of a cluster are killed (a mixin).

    :ivar cluster: the cluster's fixture, with ``log_tails()``.
    """

    scenarios = runtimes.SCENARIOS

    lock_timeout = 4
    engines = 3
    #: Networks each engine keeps alive; seconds each holds a reservation.
    keep = 2
    hold = 0.5
    #: Subnets plugged before the fault, and after it before the run ends.
    before = 10
    after = 15

    def servers_log(self):
        return self.cluster.log_tails()

    def kill_while_allocating(self, url, victim):
        """Kill ``victim`` while engines allocate; return the figures."""
        run = self.start_engines_on(url)
        self.progress(self.before)
        fault_start = time.monotonic_ns()
        victim.kill()
        fault_end = time.monotonic_ns()
        self.fault = (fault_start, fault_end)
        self.progress(self.after)
        return self.finish(run, fault_start, fault_end)

    def start_engines_on(self, url):
        """Start the engines on ``url``; return what :meth:`finish` needs."""
        settings = self.settings(test_sentinel.POOL, coordination_url=url,
                                 lock_timeout=self.lock_timeout)
        results = self.spawn.Queue()
        stop = self.spawn.Event()
        processes = [self.start(
            workers.engine, settings, self.lock_path, self.router_path,
            self.router, "e%d" % i, 10 ** 6, self.keep, results,
            self.history_dir, self.hold, stop,
            ("LockUnavailable", "PoolExhausted"))
            for i in range(self.engines)]
        return processes, results, stop

    def finish(self, run, fault_start, fault_end):
        """Stop the engines, check the history; return the figures."""
        processes, results, stop = run
        stop.set()
        reports = self.collect_reports(processes, results)
        ops = history.load(self.history_dir)
        figures = test_sentinel.measure(ops, fault_start, fault_end)
        figures["lost"] = sum(r.get("lost", 0) for r in reports)
        LOG.info("%s: %s", self.id(), json.dumps(figures, sort_keys=True))
        self.addDetail("figures", testtools.content.text_content(
            json.dumps(figures, sort_keys=True)))
        self.assertNeverCollided(reports, allowed_errors=("PoolExhausted",))
        # Every call ends, typed, well within its bound.
        self.assertLess(figures["longest_call"],
                        test_faults.WATCHDOG * self.lock_timeout, figures)
        return figures


class EtcdClusterTests(ClusterEngines, base.TestCase):
    """Three etcd members; engines in processes of their own."""

    patched_in_ci = frozenset(("test_first_named_member_killed",))

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.Timeout(TEST_TIMEOUT, gentle=True))
        cluster = etcd_cluster.EtcdCluster()
        self.require_service(cluster.available, "the etcd server")
        self.cluster = self.useFixture(cluster)

    def test_first_named_member_killed(self):
        leader = self.cluster.leader()
        first = next(m for m in self.cluster.members if m is not leader)
        url = self.cluster.url(first)
        figures = self.kill_while_allocating(url, first)
        # Calls go on through the other members: none failed, and no
        # reservation was lost, but for a confirm whose compare-and-delete
        # was on its way to the member as it was killed: the member may
        # have applied it, and the next one then finds no record
        # (EtcdRecords.delete reports it not done).
        start, end = self.fault
        failed = [op for op in history.load(self.history_dir)
                  if op.status != history.OK
                  and op.errors[:1] != ["PoolExhausted"]]
        self.assertEqual([], [
            op for op in failed
            if not (op.kind == history.CONFIRM
                    and op.errors[:1] == ["ReservationLost"]
                    and op.start <= end
                    and (op.end is None or op.end >= start))], figures)
        self.assertEqual(len(failed), figures["lost"], figures)

        self.assertStatusCheckSucceeds(url)

    def test_leader_killed(self):
        leader = self.cluster.leader()
        first = next(m for m in self.cluster.members if m is not leader)
        self.kill_while_allocating(self.cluster.url(first), leader)
