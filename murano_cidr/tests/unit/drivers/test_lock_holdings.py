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

"""A reservation never confirmed ends after ``reservation_timeout``.

Its records expire by themselves (on a fake clock here); the process that
made it forgets it at its next allocation past the timeout.
"""

from unittest import mock

import fixtures
import testtools

from murano_cidr.engine import allocator
from murano_cidr.engine.drivers.lock import driver as lock_driver
from murano_cidr import exceptions
from murano_cidr.tests import base
from murano_cidr.tests import contract

POOL = contract.SMALL_POOL_CIDRS
TIMEOUT = 7200


class FakeTime(object):
    """One clock for the holdings (monotonic) and the records (wall)."""

    def __init__(self):
        self.now = 1000.0

    def clock(self):
        return self.now

    def wall(self):
        return 1800000000.0 + self.now

    def advance(self, seconds):
        self.now += seconds


class _Reservation(object):

    def __init__(self):
        self.released = 0

    def release(self):
        self.released += 1

    def release_checked(self):
        self.release()
        return True


class TestHoldings(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.time = FakeTime()
        self.held = lock_driver.Holdings(TIMEOUT, clock=self.time.clock)

    def add(self, owner):
        reservation = _Reservation()
        self.assertIsNone(self.held.add(owner, mock.Mock(cidr=owner),
                                        reservation))
        return reservation

    def test_dropped_once_the_timeout_has_passed_not_before(self):
        reservation = self.add("a")
        self.time.advance(TIMEOUT - 0.5)
        self.assertEqual([], self.held.expire())
        self.assertIsNotNone(self.held.get("a"))
        self.time.advance(0.5)
        self.assertEqual(1, len(self.held.expire()))
        self.assertIsNone(self.held.get("a"))
        self.assertEqual(1, reservation.released)

    def test_each_is_dropped_at_its_own_deadline(self):
        first = self.add("a")
        self.time.advance(TIMEOUT / 2)
        second = self.add("b")
        self.time.advance(TIMEOUT / 2)
        self.held.expire()
        self.assertEqual((1, 0), (first.released, second.released))
        self.assertEqual(["b"], [h.allocation.cidr
                                 for h in self.held.values()])
        self.time.advance(TIMEOUT / 2)
        self.held.expire()
        self.assertEqual((1, 1), (first.released, second.released))
        self.assertEqual([], self.held.values())

    def test_what_was_popped_is_never_released(self):
        popped = self.add("a")
        kept = self.add("b")
        self.assertIsNotNone(self.held.pop("a"))
        self.time.advance(TIMEOUT)
        self.held.expire()
        self.assertEqual((0, 1), (popped.released, kept.released))

    def test_dropped_owners_remembered_are_bounded(self):
        self.useFixture(fixtures.MonkeyPatch(
            "murano_cidr.engine.drivers.lock.driver.DROPPED_KEPT", 2))
        for owner in ("a", "b", "c"):
            self.add(owner)
        self.time.advance(TIMEOUT)
        self.held.expire()
        self.assertEqual([False, True, True],
                         [self.held.pop_dropped(o) is not None
                          for o in ("a", "b", "c")])

    def test_pop_all(self):
        self.add("a")
        self.assertEqual(1, len(self.held.pop_all()))
        self.assertEqual([], self.held.values())

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
        real = lock_driver.Holdings
        self.useFixture(fixtures.MonkeyPatch(
            "murano_cidr.engine.drivers.lock.driver.Holdings",
            lambda timeout: real(timeout, clock=self.time.clock)))
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.engine.drivers.lock.picking.time.time",
            side_effect=self.time.wall))

    def make_driver(self):
        driver = allocator.get_allocator(self.conf)
        self.addCleanup(driver.close)
        return driver

    def test_a_failed_deploy_never_deleted_ends_after_the_timeout(self):
        deploy, other = self.make_driver(), self.make_driver()
        router = []
        cidr = deploy.allocate("failed", scope="r")
        # The stack push failed: no confirm, and no delete yet.
        for i in range(3):
            router.append(other.allocate("n-%d" % i, scope="r",
                                         taken=router))
            other.confirm("n-%d" % i)
        self.assertEqual(set(POOL) - {cidr}, set(router))
        self.time.advance(TIMEOUT - 1)
        self.assertRaises(exceptions.PoolExhausted, other.allocate, "n-3",
                          scope="r", taken=router)
        self.time.advance(1)
        self.assertEqual(cidr, other.allocate("n-3", scope="r",
                                              taken=router))
        # A late confirm of the expired one, taken over since, fails.
        self.assertRaises(exceptions.ReservationLost, deploy.confirm,
                          "failed")
        self.assertFalse(deploy.release("failed"))
        self.assertEqual(cidr, other.get("n-3").cidr)

    def test_a_late_confirm_after_the_engine_dropped_it_raises(self):
        deploy = self.make_driver()
        cidr = deploy.allocate("failed", scope="r")
        self.time.advance(TIMEOUT)
        # The engine's next allocation drops the expired handle.
        deploy.allocate("next", scope="r")
        self.assertIsNone(deploy.get("failed"))
        e = self.assertRaises(exceptions.ReservationLost, deploy.confirm,
                              "failed")
        self.assertEqual(cidr, e.kwargs["cidr"])
        self.assertIn("reservation_timeout", str(e))
        # Said once: the owner is then unknown, and confirming it does
        # nothing.
        self.assertIsNone(deploy.confirm("failed"))

    def test_a_release_forgets_the_dropped_owner(self):
        deploy = self.make_driver()
        deploy.allocate("failed", scope="r")
        self.time.advance(TIMEOUT)
        deploy.allocate("next", scope="r")
        deploy.release("failed")
        self.assertIsNone(deploy.confirm("failed"))

    def test_an_expired_reservation_nobody_took_may_still_be_confirmed(self):
        # Files keep an expired record until its block is reserved again:
        # nobody else could have been given the CIDR meanwhile.
        deploy = self.make_driver()
        deploy.allocate("slow", scope="r")
        self.time.advance(TIMEOUT)
        deploy.confirm("slow")
        self.assertIsNone(deploy.get("slow"))

    def test_the_engine_forgets_it_at_its_next_allocation(self):
        deploy = self.make_driver()
        deploy.allocate("failed", scope="r")
        self.time.advance(TIMEOUT)
        self.assertIsNotNone(deploy.get("failed"))
        deploy.allocate("next", scope="r")
        self.assertIsNone(deploy.get("failed"))

    def test_what_is_on_the_router_stays_taken_after_the_timeout(self):
        deploy, other = self.make_driver(), self.make_driver()
        cidr = deploy.allocate("slow", scope="r")
        self.time.advance(TIMEOUT)
        got = {other.allocate("o-%d" % i, scope="r", taken=[cidr])
               for i in range(3)}
        self.assertNotIn(cidr, got)
        self.assertRaises(exceptions.PoolExhausted, other.allocate, "o-3",
                          scope="r", taken=[cidr])
