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

"""The ``lock`` driver on Redis with Sentinel: a master, a replica and
three Sentinels of the test's own (:mod:`.sentinel_servers`).

* A master stalled (SIGSTOP) for 10 s, long enough for the Sentinels to
  promote its replica, then resumed while engines go on allocating, one
  of them started during the stall: the resumed master answers as master
  to the clients still connected to it until the Sentinels turn it into a
  replica. No two engines may hold one CIDR (the history checker), and
  the engines allocate again once the old master is a replica.
* The first Sentinel of the URL down, the others and the master up: every
  call works, and ``murano-cidr-status upgrade check`` succeeds.
* The master SIGKILLed in sync, three reservations in flight (their
  records acknowledged by the replica, their subnets not created yet):
  after the failover (and the old master back as a replica) another
  engine fills the pool around them, and their confirms succeed.
* A replica that acknowledges nothing (stopped: as far behind as it
  gets): the ``allocate`` fails with ``LockUnavailable``, nothing handed
  out, and allocations go on once it acknowledges again.

Each runs its engines plain and patched by eventlet as Murano's engine
is (:mod:`~murano_cidr.tests.functional.runtimes`); CI runs the stall
in both, the others plain (the failover they meet is the servers', the
same whatever runs the engine). ``MURANO_CIDR_ALL_FAULTS=1`` also
runs the other cells patched, and the stall with a longer run after the
resume.
The figures of ``doc/source/admin/lock-services.rst`` are the default
stall run ten times in a row.
"""

import json
import threading
import time

import fixtures
from oslo_log import log as logging
import testtools

from murano_cidr.tests import base
from murano_cidr.tests.functional import history
from murano_cidr.tests.functional.lock import sentinel_servers
from murano_cidr.tests.functional.lock import test_faults
from murano_cidr.tests.functional.lock import test_lock_driver as harness
from murano_cidr.tests.functional.lock import workers
from murano_cidr.tests.functional import runtimes

LOG = logging.getLogger(__name__)

#: 16 candidate /24s: engines contend for them.
POOL = {"pool_cidrs": ["10.43.0.0/20"], "subnet_prefixlen": 24}
#: Seconds a test may run at most, whatever happens.
TEST_TIMEOUT = 300

load_tests = runtimes.load_tests


def measure(ops, fault_start, fault_end):
    """Return the figures of one run, from its recorded calls.

    :param ops: the recorded calls (:func:`history.load`).
    :param fault_start: when the fault began, on the history's clock
        (``time.monotonic_ns()``).
    :param fault_end: when it ended (the master resumed).
    :returns: a dictionary: calls, calls failed by error, the longest
        call in seconds, and the seconds from the end of the fault to the
        start of the first successful allocate that began after it.
    """
    failed = {}
    for op in ops:
        if op.status != history.OK:
            name = op.errors[0] if op.errors else op.status
            failed[name] = failed.get(name, 0) + 1
    later = [op.start for op in ops if op.kind == history.ALLOCATE
             and op.status == history.OK and op.start >= fault_start]
    return {"calls": len(ops), "failed": failed,
            "longest_call": round(max((op.end - op.start for op in ops
                                       if op.end is not None),
                                      default=0) / 1e9, 1),
            "first_allocation_after_the_stall_began": round(
                (min(later) - fault_start) / 1e9, 1) if later else None,
            "fault_seconds": round((fault_end - fault_start) / 1e9, 1)}


class SentinelTests(harness.EngineHarness, base.TestCase):
    """Redis with Sentinel; engines in processes of their own."""

    scenarios = runtimes.SCENARIOS
    patched_in_ci = frozenset(("test_master_stalled",))
    #: The variants run only with ``MURANO_CIDR_ALL_FAULTS=1``.
    by_hand = frozenset(("test_master_stalled_long",))

    lock_timeout = 30
    #: Engines allocating through the stall, and one started during it.
    engines = 3
    #: Networks each engine keeps alive; seconds each holds a reservation.
    keep = 2
    hold = 1.0
    #: Networks deployed after the stall before the run ends.
    after = 20
    #: Seconds the master stays stopped at least (a VM pause, a swap
    #: storm): the fault's length, which the issue measured with.
    stall = 10

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.Timeout(TEST_TIMEOUT, gentle=True))
        cluster = sentinel_servers.SentinelCluster()
        self.require_service(cluster.available, "the Redis server")
        self.cluster = self.useFixture(cluster)
        # NOTE: the library's default lock_timeout (30 s): each request
        # may wait 15 s, longer than the stall, so the engines' requests
        # to the stopped master are answered once it resumes.
        self.backend = {"coordination_url": self.cluster.url()}

    def start_engine(self, prefix, results, stop):
        return self.start(
            workers.engine, self.settings(POOL), self.lock_path,
            self.router_path, self.router, prefix, 10 ** 6, self.keep,
            results, self.history_dir, self.hold, stop,
            ("LockUnavailable", "PoolExhausted"), True)

    def stall_master(self, engines, after):
        results = self.spawn.Queue()
        stop = self.spawn.Event()
        processes = [self.start_engine("e%d" % i, results, stop)
                     for i in range(engines)]
        master = self.cluster.master
        self.progress(10)

        fault_start = time.monotonic_ns()
        master.freeze()
        self.assertTrue(self.cluster.wait_for_master(self.cluster.replica),
                        "the Sentinels did not promote the replica")
        processes.append(self.start_engine("late", results, stop))
        # NOTE: the stall is the fault's length, not a wait for a state.
        # With one replica, the new master has none while the old one is
        # stopped: the engines' calls fail (LockUnavailable) meanwhile.
        threading.Event().wait(max(
            0, self.stall - (time.monotonic_ns() - fault_start) / 1e9))
        master.thaw()
        fault_end = time.monotonic_ns()
        self.assertTrue(self.cluster.wait_for_role(master, "slave"),
                        "the Sentinels did not turn the old master into a "
                        "replica")
        self.progress(after)

        stop.set()
        reports = self.collect_reports(processes, results)
        figures = measure(history.load(self.history_dir), fault_start,
                          fault_end)
        figures["reports"] = reports
        LOG.info("%s: %s", self.id(), json.dumps(figures, sort_keys=True))
        self.addDetail("figures", testtools.content.text_content(
            json.dumps(figures, sort_keys=True)))
        self.assertNeverCollided(reports, allowed_errors=("PoolExhausted",))

    def test_master_stalled(self):
        self.stall_master(self.engines, self.after)

    def test_master_stalled_long(self):
        # NOTE: as many engines (16 subnets: each keeps two networks and
        # reserves one more), five times the networks after the resume.
        self.stall_master(self.engines, 5 * self.after)

    def test_first_sentinel_down(self):
        first = self.cluster.sentinels[0]
        first.stop()
        watchdog = test_faults.WATCHDOG * self.lock_timeout
        engine = test_faults.Remote(self, "e1", **POOL)
        engine.cycle("net-1", watchdog)
        engine.cycle("net-2", watchdog)
        self.assertNeverCollided()

        self.assertStatusCheckSucceeds(self.cluster.url())

    def test_master_killed_in_sync(self):
        # Reservations in flight, their records acknowledged by the
        # replica (WAIT 1), their subnets not created yet: the records
        # alone hold their CIDRs through the failover.
        watchdog = test_faults.WATCHDOG * self.lock_timeout
        holder = test_faults.Remote(self, "holder", **POOL)
        owners = ["held-%d" % i for i in range(3)]
        held = {holder.expect(history.ALLOCATE, owner, watchdog)["value"]
                for owner in owners}
        for owner in owners:
            self.routers.remove_interface(owner)
        master, replica = self.cluster.master, self.cluster.replica
        master.kill()
        self.assertTrue(self.cluster.wait_for_master(replica),
                        "the Sentinels did not promote the replica")
        # Writes need a replica again: the old master, restarted, is
        # turned into the new master's.
        master.start()
        self.assertTrue(self.cluster.wait_for_role(master, "slave"),
                        "the Sentinels did not turn the old master into a "
                        "replica")
        self.assertTrue(sentinel_servers.servers.until(
            lambda: replica.connected_replicas() == 1,
            sentinel_servers.CHANGE_TIMEOUT))
        other = test_faults.Remote(self, "other", **POOL)
        given = [other.expect(history.ALLOCATE, "other-%d" % i,
                              watchdog)["value"]
                 for i in range(16 - len(held))]
        other.expect(history.ALLOCATE, "one-more", watchdog,
                     error="PoolExhausted")
        self.assertEqual(set(), held & set(given))
        # The records were kept: every confirm succeeds.
        for owner in owners:
            holder.expect(history.CONFIRM, owner, watchdog)
        self.assertNeverCollided(allowed_errors=("PoolExhausted",))

    def test_replica_behind(self):
        # A replica that acknowledges nothing (stopped: as far behind as
        # it gets): a record no replica acknowledged is not handed out.
        watchdog = test_faults.WATCHDOG * self.lock_timeout
        engine = test_faults.Remote(self, "e1", **POOL)
        engine.cycle("net-1", watchdog)
        self.cluster.replica.freeze()
        try:
            reply = engine.expect(history.ALLOCATE, "net-2", watchdog,
                                  error="LockUnavailable")
        finally:
            self.cluster.replica.thaw()
        self.assertIn("0 replica(s) acknowledged, 1 needed", reply["message"])
        # Once it acknowledges again, allocations go on.
        engine.cycle("net-3", watchdog)
        self.assertNeverCollided()
