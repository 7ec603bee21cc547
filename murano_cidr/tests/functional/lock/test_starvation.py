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

"""Starved engines: frozen (SIGSTOP) longer than their reservations live.

A lock that expires cannot stop a frozen engine from plugging its subnet
late (the router, as Neutron does, refuses the second of two overlapping
subnets); what the ``lock`` driver guarantees is that an engine whose
``confirm`` succeeded held its lock from the moment ``allocate`` returned.
:func:`held_throughout` checks exactly that over the recorded history: two
confirmed reservations of overlapping CIDRs in one scope were never both
held, from the end of their allocate to the start of their confirm.

The engines run plain and patched by eventlet as Murano's engine is
(:mod:`~murano_cidr.tests.functional.runtimes`), both in CI.
"""

import collections
import os
import random
import signal
import threading

import netaddr
from testtools import content

from murano_cidr import exceptions
from murano_cidr.tests import base
from murano_cidr.tests.functional import history
from murano_cidr.tests.functional.lock import servers
from murano_cidr.tests.functional.lock import test_faults
from murano_cidr.tests.functional.lock import test_lock_driver as harness
from murano_cidr.tests.functional.lock import workers
from murano_cidr.tests.functional import runtimes

load_tests = runtimes.load_tests

#: Eight /24s: few enough that an expired lock is soon taken by another.
POOL = harness.SMALL_POOL


def held_throughout(ops):
    """Check that every successful confirm held its lock from allocate on.

    :param ops: the recorded calls (:func:`history.load`).
    :returns: one line per pair of owners of one scope, with overlapping
        CIDRs, both confirmed, whose reservations (from the end of the
        allocate to the start of the confirm) were held at the same time.
    """
    allocated = {}
    held = []
    for op in sorted(ops, key=lambda op: op.start):
        if op.kind == history.ALLOCATE and op.status == history.OK:
            allocated[op.owner] = op
        elif (op.kind == history.CONFIRM and op.status == history.OK
                and op.owner in allocated):
            alloc = allocated.pop(op.owner)
            held.append((alloc, netaddr.IPNetwork(alloc.value), op))
    broken = []
    for i, (a, net_a, ca) in enumerate(held):
        for b, net_b, cb in held[i + 1:]:
            if (a.scope == b.scope and net_a.first <= net_b.last
                    and net_b.first <= net_a.last
                    and a.end < cb.start and b.end < ca.start):
                broken.append("%s and %s both confirmed %s/%s, reserved at "
                              "the same time" % (a.owner, b.owner, a.value,
                                                 b.value))
    return broken


class StarvationTests(harness.EngineHarness):
    """A lock server of the test's own and engines frozen at random.

    :cvar server_class: the :class:`~.servers.LocalServer` to start.
    """

    scenarios = runtimes.SCENARIOS
    server_class = None
    patched_in_ci = frozenset((
        "test_frozen_engines_never_confirm_a_lost_lock",))
    lock_timeout = 2
    #: Engines deploying at once, and the networks each deploys.
    engines = 3
    count = 8
    #: Freezes per run, each longer than ``lock_timeout``.
    freezes = 3

    def setUp(self):
        super().setUp()
        server = self.server_class()
        self.require_service(server.available,
                             "the %s server" % server.name)
        self.server = self.useFixture(server)
        # NOTE: a reservation is a record that lives reservation_timeout,
        # whatever its engine does: as short as the locks here, so that a
        # frozen engine's reservations expire while it is frozen.
        self.backend = {"coordination_url": self.server.url,
                        "lock_timeout": self.lock_timeout,
                        "reservation_timeout": self.lock_timeout}

    def freeze(self, process, seconds):
        """Stop ``process`` for ``seconds``; SIGCONT it at cleanup too."""
        self.addCleanup(self._thaw, process)
        os.kill(process.pid, signal.SIGSTOP)
        threading.Event().wait(seconds)
        self._thaw(process)

    @staticmethod
    def _thaw(process):
        if process.is_alive():
            os.kill(process.pid, signal.SIGCONT)

    def assertHeldThroughout(self):
        ops = history.load(self.history_dir)
        self.assertEqual([], [op for op in ops
                              if op.status == history.CRASH])
        self.assertEqual([], held_throughout(ops))
        nets = sorted(netaddr.IPNetwork(c)
                      for c in self.routers.cidrs(self.router))
        for a, b in zip(nets, nets[1:]):
            self.assertLess(a.last, b.first)
        return ops

    def confirm_after_the_lock_was_taken(self):
        """Freeze an engine holding a reservation until another takes it.

        Its confirm, once it is thawed, must fail.
        """
        victim = test_faults.Remote(self, "victim", **POOL)
        watchdog = test_faults.WATCHDOG * 2 * self.lock_timeout
        cidr = victim.expect(history.ALLOCATE, "v-1", watchdog)["value"]
        pool = [str(n) for n in netaddr.IPNetwork(
            POOL["pool_cidrs"][0]).subnet(24)]
        others = [c for c in pool if c != cidr]
        thief = self.allocator(**POOL)
        stolen = []

        def steal():
            try:
                stolen.append(thief.allocate("thief", scope=self.router,
                                             taken=others))
            except (exceptions.PoolExhausted, exceptions.LockUnavailable):
                return False
            return True

        os.kill(victim.process.pid, signal.SIGSTOP)
        self.addCleanup(self._thaw, victim.process)
        # The frozen victim's lock expires; the thief then gets its CIDR.
        self.assertTrue(harness._until(steal),
                        "the frozen engine's lock never expired")
        self.assertEqual([cidr], stolen)
        self._thaw(victim.process)
        victim.expect(history.CONFIRM, "v-1", watchdog, "ReservationLost")
        # The documented answer: undo the subnet, allocate again.
        victim.expect(history.RELEASE, "v-1", watchdog)
        thief.confirm("thief")
        thief.release("thief")

    def test_frozen_engines_never_confirm_a_lost_lock(self):
        # One engine frozen until its lock was taken, then several frozen
        # at random moments (one server start for both: seconds count).
        self.confirm_after_the_lock_was_taken()
        results = self.spawn.Queue()
        engines = [self.start(workers.engine, self.settings(POOL),
                              self.lock_path, self.router_path, self.router,
                              "e%d" % i, self.count, 1, results,
                              self.history_dir, 0.2)
                   for i in range(self.engines)]
        rng = random.Random()
        freezes = 0
        while any(p.is_alive() for p in engines) and freezes < self.freezes:
            # A random engine, at a random moment, longer than its locks
            # live (its heartbeat stops with it).
            threading.Event().wait(rng.uniform(0, 0.5))
            alive = [p for p in engines if p.is_alive()]
            if alive:
                self.freeze(rng.choice(alive),
                            self.lock_timeout * rng.uniform(1.2, 1.6))
                freezes += 1
        reports = self.finish_engines(engines, results, self.count)
        counters = collections.Counter()
        for report in reports:
            counters.update({k: v for k, v in report.items()
                             if k != "prefix"})
        ops = self.assertHeldThroughout()
        self.addDetail("counters", content.text_content(
            "%s freezes, %s" % (freezes, dict(counters))))
        self.assertEqual([], [op for op in ops if op.status == history.FAIL
                              and not {"LockUnavailable", "ReservationLost",
                                       "PoolExhausted"} & set(op.errors)])


class TestRedisStarvation(StarvationTests, base.TestCase):
    server_class = servers.RedisServer


class TestEtcdStarvation(StarvationTests, base.TestCase):
    server_class = servers.EtcdServer


class TestZooKeeperStarvation(StarvationTests, base.TestCase):
    server_class = servers.ZooKeeperServer


class TestHeldThroughout(base.TestCase):
    """The check itself, on histories built by hand."""

    def _deploy(self, owner, cidr, allocated, confirm_at, status=history.OK):
        return [history.make_op(history.ALLOCATE, owner, allocated - 1,
                                allocated, value=cidr, scope="r",
                                process=owner),
                history.make_op(history.CONFIRM, owner, confirm_at,
                                confirm_at + 1, status=status,
                                process=owner, index=1)]

    def test_two_confirmed_reservations_held_at_once(self):
        ops = (self._deploy("a", "10.0.0.0/24", 10, 50)
               + self._deploy("b", "10.0.0.0/23", 30, 40))
        self.assertEqual(1, len(held_throughout(ops)))

    def test_one_after_the_other_or_one_lost(self):
        ops = (self._deploy("a", "10.0.0.0/24", 10, 20)
               + self._deploy("b", "10.0.0.0/24", 30, 40)
               + self._deploy("c", "10.0.0.0/24", 15, 35, history.FAIL)
               + self._deploy("d", "10.0.1.0/24", 10, 50))
        self.assertEqual([], held_throughout(ops))
