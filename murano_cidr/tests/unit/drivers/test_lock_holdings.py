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

"""The ``lock`` driver drops a reservation never confirmed after a timeout.

Time passes as a fake clock says, and timers fire when it passes their
deadline; one test lets a real timer fire, watched by a bounded poll.
"""

import time
from unittest import mock

import fixtures
import testtools

from murano_cidr import allocator
from murano_cidr.drivers.lock import backend
from murano_cidr.drivers.lock import holdings
from murano_cidr import exceptions
from murano_cidr.tests import base
from murano_cidr.tests import contract

POOL = contract.SMALL_POOL_CIDRS
TIMEOUT = 7200


class _Timer(object):

    def __init__(self, when, function):
        self.when = when
        self.function = function
        self.daemon = False
        self.started = self.cancelled = False

    def start(self):
        self.started = True

    def cancel(self):
        self.cancelled = True


class FakeTime(object):
    """A clock, and the timers it fires as it advances."""

    def __init__(self):
        self.now = 1000.0
        self.timers = []

    def clock(self):
        return self.now

    def timer(self, delay, function):
        timer = _Timer(self.now + delay, function)
        self.timers.append(timer)
        return timer

    def live(self):
        return [t for t in self.timers if t.started and not t.cancelled
                and t.function is not None]

    def advance(self, seconds):
        self.now += seconds
        while True:
            due = [t for t in self.live() if t.when <= self.now]
            if not due:
                return
            for timer in due:
                function, timer.function = timer.function, None
                function()


class _Reservation(backend.Reservation):

    def __init__(self):
        self.released = 0

    def still_held(self):
        return True

    def release(self):
        self.released += 1

    def release_checked(self):
        self.release()
        return True


class TestHoldings(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.time = FakeTime()
        self.held = holdings.Holdings(TIMEOUT, clock=self.time.clock,
                                      timer=self.time.timer)

    def add(self, owner):
        reservation = _Reservation()
        self.assertIsNone(self.held.add(owner, mock.Mock(cidr=owner),
                                        reservation))
        return reservation

    def test_dropped_once_the_timeout_has_passed_not_before(self):
        reservation = self.add("a")
        self.time.advance(TIMEOUT - 0.5)
        self.assertIsNotNone(self.held.get("a"))
        self.assertEqual(0, reservation.released)
        self.time.advance(0.5)
        self.assertIsNone(self.held.get("a"))
        self.assertEqual(1, reservation.released)
        self.assertEqual([], self.time.live())

    def test_each_is_dropped_at_its_own_deadline(self):
        first = self.add("a")
        self.time.advance(TIMEOUT / 2)
        second = self.add("b")
        self.time.advance(TIMEOUT / 2)
        self.assertEqual((1, 0), (first.released, second.released))
        self.assertEqual(["b"], [h.allocation.cidr
                                 for h in self.held.values()])
        self.time.advance(TIMEOUT / 2)
        self.assertEqual((1, 1), (first.released, second.released))
        self.assertEqual([], self.held.values())

    def test_what_was_popped_is_never_released_by_the_timer(self):
        popped = self.add("a")
        kept = self.add("b")
        self.assertIsNotNone(self.held.pop("a"))
        self.time.advance(TIMEOUT)
        self.assertEqual((0, 1), (popped.released, kept.released))

    def test_one_timer_at_a_time(self):
        for i in range(10):
            self.add("n-%d" % i)
            self.time.advance(1)
        self.assertEqual(1, len(self.time.live()))
        self.assertTrue(self.time.live()[0].daemon)
        self.time.advance(TIMEOUT - 10)
        self.assertEqual(9, len(self.held.values()))
        self.assertEqual(1, len(self.time.live()))

    def test_a_timer_that_fires_early_drops_nothing(self):
        reservation = self.add("a")
        [early] = self.time.live()
        early.function = None
        self.time.now += TIMEOUT - 0.01
        self.assertEqual([], self.held.expire())
        self.assertEqual(0, reservation.released)
        [timer] = self.time.live()
        self.assertAlmostEqual(self.time.now + 0.01, timer.when)

    def test_pop_all_stops_the_timer(self):
        self.add("a")
        self.assertEqual(1, len(self.held.pop_all()))
        self.assertEqual([], self.time.live())

    def test_another_thread_added_first(self):
        first = _Reservation()
        self.held.add("a", mock.Mock(cidr="x"), first)
        other = self.held.add("a", mock.Mock(cidr="y"), _Reservation())
        self.assertEqual("x", other.allocation.cidr)
        self.assertIs(first, self.held.get("a").reservation)


class TestLockDriverTimeout(base.TestCase):
    """Two drivers on file locks: two engine workers of one host."""

    def setUp(self):
        super().setUp()
        self.config(driver="lock", pool_cidrs=contract.SMALL_POOL,
                    subnet_prefixlen=24, reservation_timeout=TIMEOUT)
        self.time = FakeTime()
        real = holdings.Holdings
        self.useFixture(fixtures.MonkeyPatch(
            "murano_cidr.drivers.lock.holdings.Holdings",
            lambda timeout: real(timeout, clock=self.time.clock,
                                 timer=self.time.timer)))

    def make_driver(self):
        driver = allocator.get_allocator(self.conf)
        self.addCleanup(driver.close)
        return driver

    def test_a_failed_deploy_never_deleted_ends_after_the_timeout(self):
        deploy, delete = self.make_driver(), self.make_driver()
        router = []
        cidr = deploy.allocate("failed", scope="r")
        # The stack push failed: no confirm, and no delete yet.
        for i in range(3):
            router.append(delete.allocate("n-%d" % i, scope="r",
                                          taken=router))
            delete.confirm("n-%d" % i)
        self.assertEqual(set(POOL) - {cidr}, set(router))
        self.time.advance(TIMEOUT - 1)
        self.assertRaises(exceptions.PoolExhausted, delete.allocate, "n-3",
                          scope="r", taken=router)
        self.assertEqual(cidr, deploy.get("failed").cidr)
        self.time.advance(1)
        self.assertIsNone(deploy.get("failed"))
        self.assertEqual(cidr, delete.allocate("n-3", scope="r",
                                               taken=router))
        # A late confirm or release of the dropped one does nothing.
        deploy.confirm("failed")
        self.assertFalse(deploy.release("failed"))
        self.assertEqual(cidr, delete.get("n-3").cidr)

    def test_what_is_on_the_router_stays_taken_after_the_timeout(self):
        deploy, other = self.make_driver(), self.make_driver()
        cidr = deploy.allocate("slow", scope="r")
        self.time.advance(TIMEOUT)
        self.assertIsNone(deploy.get("slow"))
        got = {other.allocate("o-%d" % i, scope="r", taken=[cidr])
               for i in range(3)}
        self.assertNotIn(cidr, got)
        self.assertRaises(exceptions.PoolExhausted, other.allocate, "o-3",
                          scope="r", taken=[cidr])


class TestRealTimer(base.TestCase):

    def test_the_holder_drops_it_on_its_own(self):
        # No call is made to the holding driver after allocate: its record
        # expires, and its timer drops it. Polled, never past the watchdog.
        self.config(driver="lock", pool_cidrs=contract.SMALL_POOL,
                    subnet_prefixlen=24, reservation_timeout=1)
        holder = allocator.get_allocator(self.conf)
        self.addCleanup(holder.close)
        other = allocator.get_allocator(self.conf)
        self.addCleanup(other.close)
        router = []
        cidr = holder.allocate("failed", scope="r")
        for i in range(3):
            router.append(other.allocate("n-%d" % i, scope="r",
                                         taken=router))
            other.confirm("n-%d" % i)
        watchdog = time.monotonic() + 30
        while True:
            try:
                got = other.allocate("n-3", scope="r", taken=router)
                break
            except exceptions.PoolExhausted:
                self.assertLess(time.monotonic(), watchdog,
                                "not dropped within 30 times its timeout")
                time.sleep(0.05)
        self.assertEqual(cidr, got)
        # The record expired by itself; the holder's timer forgets it too.
        while holder.get("failed") is not None:
            self.assertLess(time.monotonic(), watchdog,
                            "not forgotten within 30 times its timeout")
            time.sleep(0.05)
