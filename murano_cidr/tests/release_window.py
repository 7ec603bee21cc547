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

"""The release window of the ``db`` driver, against a model router.

A test-case mixin for any backend: the test case gives ``make_driver``
(``[cidr_allocator]`` overrides) on a migrated database. The router is the
simulator's :class:`~murano_cidr.measuring.simulate.router.ModelRouter`, which
refuses an overlapping interface as Neutron does; the clock the driver
records and compares release times with is the test's.

The pool has four /24s, so a CIDR that is not handed out shows as an
exhausted pool rather than as a lucky pick.
"""

import datetime
import os

import fixtures

from murano_cidr import exceptions
from murano_cidr.measuring.simulate import router as router_mod

GRACE = 600
SCOPE = "router-1"
POOL = {"pool_cidrs": ["10.20.0.0/22"], "subnet_prefixlen": 24}


class Clock(fixtures.Fixture):
    """The clock the ``db`` driver records and compares release times with.

    It stands still (whole seconds, as the driver's) until :meth:`later`,
    so a test says when time passes instead of relying on which second a
    call falls in.

    :param start: the first time (naive UTC); a fixed day if None.
    """

    def __init__(self, start=None):
        super().__init__()
        self.now = start or datetime.datetime(2026, 12, 1, 12, 0, 0)

    def _setUp(self):
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.drivers.db.queries.utcnow",
            side_effect=lambda: self.now))

    def later(self, seconds):
        """Move the clock ``seconds`` on."""
        self.now += datetime.timedelta(seconds=seconds)


class ReleaseWindowTests(object):
    """A released CIDR waits for its subnet to leave the router."""

    def setUp(self):
        super().setUp()
        self.clock = self.useFixture(Clock())
        self.router = router_mod.ModelRouter.create(
            os.path.join(self.useFixture(fixtures.TempDir()).path,
                         "router.sqlite"))
        self.addCleanup(self.router.close)
        self.driver = self.make_driver(release_grace=GRACE, **POOL)

    @property
    def now(self):
        return self.clock.now

    def later(self, seconds):
        self.clock.later(seconds)

    def deploy(self, owner, taken=None):
        """Allocate, plug the subnet into the router, confirm."""
        cidr = self.driver.allocate(
            owner, scope=SCOPE,
            taken=taken if taken is not None else self.router.reader(SCOPE))
        self.router.add_interface(SCOPE, owner, cidr)
        self.driver.confirm(owner)
        return cidr

    def fill_then_release_one(self):
        """Fill the pool with four networks, then release the first.

        Its subnet stays on the router.
        """
        cidrs = [self.deploy("net-%d" % i) for i in range(1, 5)]
        self.assertTrue(self.driver.release("net-1"))
        return cidrs[0]

    def unseen(self, cidr):
        """A client that cannot see ``cidr``: another project's subnet."""
        return lambda: [c for c in self.router.cidrs(SCOPE) if c != cidr]

    def test_not_handed_out_while_its_subnet_is_on_the_router(self):
        released = self.fill_then_release_one()
        self.later(10 * GRACE)
        self.assertRaises(exceptions.PoolExhausted, self.deploy, "net-5")
        self.assertEqual([released],
                         [a.cidr for a in self.driver.list_released()])
        self.router.remove_interface("net-1")
        self.assertEqual(released, self.deploy("net-5"))
        self.assertEqual([], self.driver.list_released())
        self.assertEqual([], self.router.refusals())

    def test_not_handed_out_within_the_grace_period_to_a_blind_client(self):
        released = self.fill_then_release_one()
        self.later(GRACE - 1)
        # Today's code frees it at release, and the router refuses it.
        self.assertRaises(exceptions.PoolExhausted, self.deploy, "net-5",
                          taken=self.unseen(released))
        self.assertEqual([], self.router.refusals())
        self.assertIsNone(self.driver.get("net-1"))
        # Past the grace period a client that cannot see the subnet gets
        # it: the limit the grace period sets (Neutron refuses the plug).
        self.later(2)
        self.assertEqual(released, self.driver.allocate(
            "net-5", scope=SCOPE, taken=self.unseen(released)))

    def test_reused_once_off_the_router_and_past_the_grace_period(self):
        released = self.fill_then_release_one()
        self.later(10)
        self.router.remove_interface("net-1")
        self.assertRaises(exceptions.PoolExhausted, self.deploy, "net-5")
        self.later(GRACE)
        self.assertEqual(released, self.deploy("net-5"))
        self.assertEqual([], self.router.refusals())

    def test_the_owner_allocates_again_at_once(self):
        released = self.fill_then_release_one()
        self.router.remove_interface("net-2")
        self.assertTrue(self.driver.release("net-2"))
        self.later(GRACE + 1)
        # net-1's subnet is still on the router, net-2's is gone.
        again = self.deploy("net-1")
        self.assertNotEqual(released, again)
        self.assertEqual("net-1", self.driver.get("net-1").owner)
        self.assertEqual(again, self.driver.get("net-1").cidr)
        self.assertEqual([("net-1", released)],
                         [(a.owner, a.cidr) for a in
                          self.driver.list_released()])
        usage = self.driver.usage(scope=SCOPE)
        self.assertEqual((3, 1, 4, 0), (usage["allocations"],
                                        usage["released"],
                                        usage["allocated"], usage["free"]))

    def test_free_released_frees_what_was_listed(self):
        released = self.fill_then_release_one()
        held, = self.driver.list_released(scope=SCOPE)
        self.assertEqual((released, "net-1", self.now),
                         (held.cidr, held.owner,
                          held.released_at.replace(tzinfo=None)))
        self.assertTrue(self.driver.free_released(held))
        self.assertFalse(self.driver.free_released(held))
        self.router.remove_interface("net-1")
        self.assertEqual(released, self.deploy("net-5"))


class ConcurrentReleaseTests(ReleaseWindowTests):
    """What needs a second writer during an allocation: not SQLite."""

    def release_during_the_read(self, grace, later=0):
        """Allocate while another engine plugs and releases its network.

        The pool is full but for that network, whose subnet is plugged and
        released after this allocation read ``taken``; the clock then
        moves ``later`` seconds on, still inside the allocation.

        :returns: that network's CIDR, which must stay held.
        """
        self.driver = self.make_driver(release_grace=grace, **POOL)
        other = self.make_driver(release_grace=grace, **POOL)
        late = other.allocate("net-1", scope=SCOPE)
        for i in range(2, 5):
            self.deploy("net-%d" % i)

        def read_then_release():
            seen = self.router.cidrs(SCOPE)
            self.router.add_interface(SCOPE, "net-1", late)
            self.assertTrue(other.release("net-1"))
            self.later(later)
            return seen

        self.assertRaises(exceptions.PoolExhausted, self.driver.allocate,
                          "net-5", scope=SCOPE, taken=read_then_release)
        self.assertEqual([late], [a.cidr for a in
                                  self.driver.list_released()])
        return late

    def test_a_read_older_than_the_release_frees_nothing(self):
        # Found by the model check (tools/model/cidr.pml): taken is read,
        # then another engine plugs its subnet and releases its network,
        # and the grace period passes, all before this engine frees
        # released rows with that read.
        self.release_during_the_read(GRACE, later=2 * GRACE)

    def test_a_release_after_the_read_in_its_second_is_not_freed(self):
        # With no grace period, a release made after this allocation read
        # taken, within the same second, is not freed by that read: the
        # cutoff (the allocation's start) is strictly after a freed row's
        # release.
        late = self.release_during_the_read(0)
        # A second on, an allocation that sees the subnet still keeps it;
        # once it is off the router, it is handed out.
        self.later(1)
        self.assertRaises(exceptions.PoolExhausted, self.deploy, "net-5")
        self.router.remove_interface("net-1")
        self.assertEqual(late, self.deploy("net-5"))
