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

"""Reservations of dead engines, and what an exhausted pool says.

A test-case mixin for any backend: the test case gives ``make_driver``
(``[cidr_allocator]`` overrides) on a migrated database. Time passes as
:class:`~murano_cidr.tests.release_window.Clock` makes it.
"""


from murano_cidr.engine.drivers.db import allocating
from murano_cidr.engine.drivers.db import compat
from murano_cidr import exceptions
from murano_cidr.tests import release_window

SCOPE = "router-1"
POOL = {"pool_cidrs": ["10.40.0.0/22"], "subnet_prefixlen": 24}
TIMEOUT = 7200
GRACE = 600


class ReclaimTests(object):

    def setUp(self):
        super().setUp()
        self.driver = self.make_driver(release_grace=GRACE,
                                       reservation_timeout=TIMEOUT, **POOL)
        self.clock = release_window.Clock(self.driver.database.engine)
        # Three deployments confirmed; the fourth engine died after its
        # pick, before its stack was pushed.
        self.cidrs = {}
        for owner in ("net-1", "net-2", "net-3", "dead"):
            self.cidrs[owner] = self.driver.allocate(owner, scope=SCOPE)
        for owner in ("net-1", "net-2", "net-3"):
            self.driver.confirm(owner)

    def test_an_unconfirmed_reservation_is_reclaimed_after_the_timeout(self):
        self.clock.later(TIMEOUT - 10)
        self.assertRaises(exceptions.PoolExhausted, self.driver.allocate,
                          "net-4", scope=SCOPE)
        self.clock.later(10)
        self.assertEqual(self.cidrs["dead"],
                         self.driver.allocate("net-4", scope=SCOPE))
        self.assertIsNone(self.driver.get("dead"))
        # The confirmed ones are never reclaimed, however old.
        self.driver.confirm("net-4")
        self.clock.later(100 * TIMEOUT)
        self.assertRaises(exceptions.PoolExhausted, self.driver.allocate,
                          "net-5", scope=SCOPE)
        self.assertEqual({"net-1", "net-2", "net-3", "net-4"},
                         {a.owner for a in self.driver.list(SCOPE)})

    def rows(self):
        """Every allocation row, as the database holds it."""
        table = allocating.ALLOCATIONS
        with self.driver.database.engine.connect() as conn:
            return conn.execute(compat.select(table).order_by(
                table.c.id)).fetchall()

    def test_a_late_confirm_of_a_reclaimed_reservation_raises(self):
        # The engine of "dead" was slow, not dead: past the timeout its
        # reservation is reclaimed and handed out again, then its stack
        # push ends and it confirms.
        self.clock.later(TIMEOUT)
        self.assertEqual(self.cidrs["dead"],
                         self.driver.allocate("net-4", scope=SCOPE))
        before = self.rows()
        e = self.assertRaises(exceptions.ReservationLost,
                              self.driver.confirm, "dead")
        self.assertIn("The reservation of %s for owner dead was lost before "
                      "it was confirmed (" % self.cidrs["dead"], str(e))
        self.assertIn("reclaimed, unconfirmed for longer than "
                      "[cidr_allocator] reservation_timeout = %d s" % TIMEOUT,
                      str(e))
        self.assertIn("if its subnet is on the router already", str(e))
        # Nothing changed: net-4 still holds it, unconfirmed.
        self.assertEqual(before, self.rows())
        self.assertIsNone(self.driver.get("dead"))
        self.assertFalse(self.driver.get("net-4").confirmed)
        # A second confirm has nothing left to report.
        self.driver.confirm("dead")
        self.assertEqual(before, self.rows())

    def test_confirming_twice_is_not_an_error(self):
        self.driver.confirm("dead")
        self.driver.confirm("dead")
        self.clock.later(10 * TIMEOUT)
        self.driver.confirm("dead")
        self.assertTrue(self.driver.get("dead").confirmed)

    def test_never_while_its_subnet_is_on_the_router(self):
        self.clock.later(10 * TIMEOUT)
        on_router = [self.cidrs["dead"]]
        self.assertRaises(exceptions.PoolExhausted, self.driver.allocate,
                          "net-4", scope=SCOPE, taken=lambda: on_router)
        self.assertEqual(self.cidrs["dead"], self.driver.get("dead").cidr)
        # Its engine confirms late: it keeps its CIDR.
        self.driver.confirm("dead")
        self.clock.later(10 * TIMEOUT)
        self.assertRaises(exceptions.PoolExhausted, self.driver.allocate,
                          "net-4", scope=SCOPE)

    def test_the_exhausted_pool_tells_what_it_holds_back(self):
        self.driver.confirm("dead")
        self.assertTrue(self.driver.release("net-1"))
        self.clock.later(GRACE + 5)
        self.assertTrue(self.driver.release("net-2"))
        self.clock.later(5)
        # net-1's subnet is still on the router, net-2's within the grace.
        e = self.assertRaises(exceptions.PoolExhausted, self.driver.allocate,
                              "net-6", scope=SCOPE,
                              taken=[self.cidrs["net-1"]])
        message = str(e)
        self.assertIn("(4 subnets: 4 allocated, 0 taken); 2 live, "
                      "2 released and held back (1 within release_grace = "
                      "600 s, 1 past it whose subnet the last allocation "
                      "saw on the router)", message)
        self.assertIn("; the first held back frees at ", message)
        self.assertIn("UTC unless its subnet is on the router", message)
        # Issue 32: "--config-file <file>", whatever the engine had read;
        # this driver's configuration read no file.
        self.assertIn("; 'murano-cidr reconcile' releases", message)
        self.assertNotIn("unconfirmed", message)
