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

"""Confirm after a successful push never fails it; a failed release says
what reclaims its allocation."""

import logging

import fixtures

from murano_cidr.engine.integration import murano
from murano_cidr import exceptions
from murano_cidr.tests import base
from murano_cidr.tests import release_window
from murano_cidr.tests.unit.drivers.db import base as db_base
from murano_cidr.tests.unit.integration import test_murano as fakes


class FailingDriver(fakes.SpyDriver):
    """A driver whose confirm and release raise what they are given."""

    confirm_error = None
    release_error = None

    def confirm(self, owner):
        super().confirm(owner)
        if self.confirm_error is not None:
            raise self.confirm_error

    def release(self, owner):
        super().release(owner)
        if self.release_error is not None:
            raise self.release_error
        return True


def lost(owner="net-1"):
    return exceptions.ReservationLost(cidr="10.20.1.0/24", owner=owner,
                                      reason="its lock expired")


class AdapterTestCase(base.TestCase):
    """The adapter over a :class:`FailingDriver`, its log captured."""

    log_level = logging.INFO

    def setUp(self):
        super().setUp()
        self.config(pool_cidrs=["10.20.0.0/23"], subnet_prefixlen=24)
        self.driver = FailingDriver(self.conf)
        self.adapter = murano.NetworkCidrAllocator(driver=self.driver)
        self.log = self.useFixture(fixtures.FakeLogger(
            name=murano.__name__, level=self.log_level))


class TestConfirmAfterThePush(AdapterTestCase):

    def test_a_lost_reservation_is_logged_and_counted_not_raised(self):
        self.driver.confirm_error = lost()
        self.assertFalse(self.adapter.confirm_cidr("net-1"))
        self.driver.confirm_error = lost("net-2")
        self.assertFalse(self.adapter.confirm_cidr("net-2"))
        self.assertEqual({"ReservationLost": 2},
                         dict(self.adapter.confirm_failures))
        self.assertIn("Could not confirm the CIDR of network net-2 "
                      "(ReservationLost: The reservation of 10.20.1.0/24",
                      self.log.output)
        self.assertIn("the deployment goes on (2 confirmations failed",
                      self.log.output)
        self.assertNotIn("Traceback", self.log.output)
        # Nothing was released behind the caller's back.
        self.assertNotIn(("release", "net-1"), self.driver.calls)

    def test_a_lost_reservation_is_an_error_naming_owner_and_cidr(self):
        log = self.useFixture(fixtures.FakeLogger(
            name=murano.__name__, format="%(levelname)s %(message)s"))
        self.driver.confirm_error = lost()
        self.assertFalse(self.adapter.confirm_cidr("net-1"))
        self.assertTrue(log.output.startswith(
            "ERROR Could not confirm the CIDR of network net-1 "
            "(ReservationLost: The reservation of 10.20.1.0/24 for owner "
            "net-1 was lost"), log.output)
        self.assertIn("so the deployment goes on", log.output)
        self.driver.confirm_error = exceptions.DatabaseUnavailable(
            backend="the database", reason="connection refused")
        self.assertFalse(self.adapter.confirm_cidr("net-2"))
        self.assertIn("\nWARNING Could not confirm the CIDR of network net-2",
                      log.output)

    def test_an_unreachable_store_does_not_fail_the_deployment(self):
        self.driver.confirm_error = exceptions.DatabaseUnavailable(
            backend="the database", reason="connection refused")
        self.assertFalse(self.adapter.confirm_cidr("net-1"))
        self.assertEqual({"DatabaseUnavailable": 1},
                         dict(self.adapter.confirm_failures))

    def test_a_driver_s_bug_is_logged_with_its_traceback(self):
        self.driver.confirm_error = KeyError("net-1")
        self.assertFalse(self.adapter.confirm_cidr("net-1"))
        self.assertIn("Traceback", self.log.output)

    def test_a_confirmation_that_works_says_so(self):
        self.assertTrue(self.adapter.confirm_cidr("net-1"))
        self.assertEqual({}, dict(self.adapter.confirm_failures))
        self.assertEqual("", self.log.output)

    def test_the_process_wide_confirm_never_raises(self):
        murano.reset_shared_allocator()
        self.addCleanup(murano.reset_shared_allocator)
        self.useFixture(fixtures.MockPatchObject(
            murano, "shared_allocator", side_effect=exceptions.DriverNotFound(
                name="nope", available="db")))
        self.assertFalse(murano.confirm_cidr("net-1"))
        self.assertIn("Could not confirm the CIDR of network net-1",
                      self.log.output)


class TestDbReservationLost(db_base.DbTestCase):
    """A db reservation reclaimed before its confirm, through the adapter."""

    def test_is_logged_as_an_error_and_not_counted_as_confirmed(self):
        driver = self.make_driver(reservation_timeout=60)
        adapter = murano.NetworkCidrAllocator(driver=driver)
        log = self.useFixture(fixtures.FakeLogger(
            name=murano.__name__, format="%(levelname)s %(message)s"))
        cidr = driver.allocate("net-1", scope="router-1")
        release_window.Clock(driver.database.engine).later(60)
        # Another deployment on the full router reclaims it.
        self.assertEqual(cidr, driver.allocate(
            "net-2", scope="router-1", taken=[
                c for c in ("10.20.0.0/24", "10.20.1.0/24", "10.20.2.0/24",
                            "10.20.3.0/24") if c != cidr]))
        self.assertFalse(adapter.confirm_cidr("net-1"))
        self.assertEqual({"ReservationLost": 1},
                         dict(adapter.confirm_failures))
        self.assertIn("ERROR Could not confirm the CIDR of network net-1 "
                      "(ReservationLost: The reservation of %s for owner "
                      "net-1 was lost" % cidr, log.output)
        self.assertFalse(driver.get("net-2").confirmed)


class TestFailedRelease(AdapterTestCase):

    log_level = logging.WARNING

    def test_says_what_reclaims_the_allocation_and_raises(self):
        self.driver.release_error = exceptions.DatabaseUnavailable(
            backend="the database", reason="connection refused")
        self.assertRaises(exceptions.DatabaseUnavailable,
                          self.adapter.release_cidr, "net-1")
        self.assertEqual({"DatabaseUnavailable": 1},
                         dict(self.adapter.release_failures))
        self.assertIn("Could not release the CIDR of network net-1",
                      self.log.output)
        self.assertIn("'murano-cidr reconcile'", self.log.output)
        self.assertIn("'murano-cidr prune --murano-db'", self.log.output)

    def test_a_release_that_works_logs_no_warning(self):
        self.assertTrue(self.adapter.release_cidr("net-1"))
        self.assertEqual("", self.log.output)
