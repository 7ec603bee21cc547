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

"""The driver contract as reusable test mixins.

:class:`DriverContractTests` holds what every driver must do; a driver runs
it through one of two mixins, chosen by what the driver announces:

* :class:`StatefulContractTests` for a driver that keeps allocations
  (``keeps_state``: idempotent per owner, no overlap within a scope,
  ``get``, ``list``, ``usage``);
* :class:`StatelessContractTests` for one that does not (``get`` and
  ``list`` say so, ``release`` returns False).

Each mixin checks that the driver announces what it is tested as, so every
test of the mixin applies and none is skipped. Every driver shipped here
runs them through testscenarios (see
``murano_cidr/tests/unit/drivers/test_contract.py``); a third-party driver
reuses them the same way::

    import testscenarios
    from murano_cidr.tests import base
    from murano_cidr.tests import contract

    load_tests = testscenarios.load_tests_apply_scenarios

    class TestMyDriver(contract.StatefulContractTests, base.TestCase):
        scenarios = [("mine", {"driver_name": "mine"})]

The driver's ``prepare`` hook runs before each test (the ``db`` driver
creates its tables). A scenario may also set ``prepare``, a callable taking
the test case, run before that (to point the driver at a database or a lock
directory).
Capabilities come from the driver's ``capabilities`` (``KEEPS_STATE``,
``HOLDS_RESERVATIONS``), so a driver is held to what it announces.
"""

import netaddr

from murano_cidr.engine import allocation
from murano_cidr.engine import allocator
from murano_cidr.engine.drivers import capabilities as caps
from murano_cidr import exceptions
from murano_cidr.operator.drivers import commands as driver_commands

#: Four /24 subnets: small enough to exhaust in a unit test.
SMALL_POOL = ["10.20.0.0/22"]
SMALL_POOL_CIDRS = ["10.20.0.0/24", "10.20.1.0/24", "10.20.2.0/24",
                    "10.20.3.0/24"]


class DriverContractTests(object):
    """Tests every allocator driver must pass; use a mixin below.

    :cvar driver_name: the entry point name of the driver under test.
    :cvar prepare: optional callable ``prepare(test)`` run before the driver
        is built.
    """

    driver_name = None
    prepare = None

    def make_driver(self, **overrides):
        """Build the driver under test with ``[cidr_allocator]`` overrides.

        The default pool is :data:`SMALL_POOL` into /24s.
        """
        settings = {"driver": self.driver_name, "pool_cidrs": SMALL_POOL,
                    "subnet_prefixlen": 24}
        settings.update(overrides)
        self.config(**settings)
        # NOTE: testscenarios sets ``prepare`` on the instance (a plain
        # function, not bound); a subclass may define it on the class.
        prepare = vars(self).get("prepare", type(self).prepare)
        if prepare is not None:
            prepare(self)
        driver_commands.prepare(self.conf)
        driver = allocator.get_allocator(self.conf)
        self.addCleanup(driver.close)
        return driver

    def setUp(self):
        super().setUp()
        self.driver = self.make_driver()

    # -- helpers -----------------------------------------------------------

    def assertNoOverlap(self, cidrs):
        nets = sorted(netaddr.IPNetwork(c) for c in cidrs)
        for a, b in zip(nets, nets[1:]):
            self.assertFalse(a.last >= b.first,
                             "%s overlaps %s" % (a, b))

    def _snapshot(self):
        """What the driver holds, to compare before and after a call."""
        return None

    # -- allocate ----------------------------------------------------------

    def test_allocate_returns_a_pool_candidate(self):
        cidr = self.driver.allocate("net-1", scope="router-1")
        self.assertIsInstance(cidr, str)
        self.assertIn(cidr, SMALL_POOL_CIDRS)

    def test_allocate_avoids_taken_strings(self):
        cidr = self.driver.allocate("net-1", scope="router-1",
                                    taken=SMALL_POOL_CIDRS[:3])
        self.assertEqual(SMALL_POOL_CIDRS[3], cidr)

    def test_allocate_avoids_taken_networks(self):
        taken = [netaddr.IPNetwork(c) for c in SMALL_POOL_CIDRS[1:]]
        self.assertEqual(SMALL_POOL_CIDRS[0],
                         self.driver.allocate("net-1", scope="r",
                                              taken=taken))

    def test_allocate_avoids_taken_with_host_bits(self):
        taken = ["10.20.0.77/24", "10.20.1.1/24", "10.20.3.9/24"]
        self.assertEqual("10.20.2.0/24",
                         self.driver.allocate("net-1", scope="r",
                                              taken=taken))

    def test_allocate_avoids_a_taken_supernet_and_subnet(self):
        taken = ["10.20.0.0/23", "10.20.3.128/25"]
        self.assertEqual("10.20.2.0/24",
                         self.driver.allocate("net-1", scope="r",
                                              taken=taken))

    def test_allocate_reads_a_callable_taken(self):
        calls = []

        def taken():
            calls.append(1)
            return SMALL_POOL_CIDRS[1:]

        self.assertEqual(SMALL_POOL_CIDRS[0],
                         self.driver.allocate("net-1", scope="r",
                                              taken=taken))
        self.assertNotEqual([], calls)

    def test_allocate_ignores_taken_of_other_version_and_outside(self):
        taken = ["fd00::/64", "192.168.0.0/16"] + SMALL_POOL_CIDRS[:3]
        self.assertEqual(SMALL_POOL_CIDRS[3],
                         self.driver.allocate("net-1", scope="r",
                                              taken=taken))

    def test_exhausted_when_everything_is_taken(self):
        e = self.assertRaises(exceptions.PoolExhausted, self.driver.allocate,
                              "net-1", scope="router-1",
                              taken=["10.0.0.0/8"])
        self.assertIn("10.20.0.0/22", str(e))
        self.assertIn("4 subnets", str(e))
        self.assertIn("router-1", str(e))
        self.assertFalse(self._snapshot())

    def test_ipv6_pool(self):
        driver = self.make_driver(ipv6_pool_cidrs=["fd00:1::/48"],
                                  ipv6_subnet_prefixlen=64)
        cidr = driver.allocate("net-6", scope="r", ip_version=6)
        net = netaddr.IPNetwork(cidr)
        self.assertEqual(6, net.version)
        self.assertEqual(64, net.prefixlen)
        self.assertIn(net, netaddr.IPNetwork("fd00:1::/48"))

    def test_ipv6_without_a_pool_is_a_clear_error(self):
        e = self.assertRaises(exceptions.InvalidArgument,
                              self.driver.allocate, "net-6", ip_version=6)
        self.assertIn("ipv6_pool_cidrs", str(e))

    # -- bad input changes nothing -----------------------------------------

    def _assert_rejected(self, error, **kwargs):
        before = self._snapshot()
        args = {"owner": "net-1", "scope": "router-1"}
        args.update(kwargs)
        self.assertRaises(error, self.driver.allocate, **args)
        self.assertEqual(before, self._snapshot())

    def test_bad_owner(self):
        for owner in ("", "   ", None, True, 4.2, b"net", "x" * 256,
                      "bad\nowner", " net-1", "net-1 "):
            self._assert_rejected(exceptions.InvalidArgument, owner=owner)

    def test_bad_scope(self):
        for scope in ("", False, ["r"], "y" * 256, "tab\there", "r ",
                      " r"):
            self._assert_rejected(exceptions.InvalidArgument, scope=scope)

    def test_bad_owner_everywhere(self):
        # One rule for every method that takes an owner or a scope.
        for owner in (" net-1", "", None, 4.2):
            self.assertRaises(exceptions.InvalidArgument,
                              self.driver.release, owner)
            self.assertRaises(exceptions.InvalidArgument,
                              self.driver.confirm, owner)
            self.assertRaises(exceptions.InvalidArgument,
                              self.driver.get, owner)
        self.assertRaises(exceptions.InvalidArgument, self.driver.list,
                          "r ")

    def test_integer_ids_are_accepted(self):
        # Murano passes integer ids; they mean their decimal strings.
        with self.driver.reserve(42, scope=7) as cidr:
            self.assertIn(cidr, SMALL_POOL_CIDRS)
        self.assertIsInstance(self.driver.release(42), bool)

    def test_bad_ip_version(self):
        for version in (5, "4", True):
            self._assert_rejected(exceptions.InvalidArgument,
                                  ip_version=version)

    def test_garbage_in_taken(self):
        for taken in (["not-a-cidr"], ["10.0.0.0/33"], [None], [42],
                      "10.0.0.0/24", 17):
            self._assert_rejected(exceptions.InvalidArgument, taken=taken)

    # -- release, confirm, reserve -----------------------------------------

    def test_release_unknown_owner_is_not_an_error(self):
        self.assertFalse(self.driver.release("nobody"))

    def test_release_bad_owner(self):
        self.assertRaises(exceptions.InvalidArgument, self.driver.release, "")

    def test_confirm_bad_owner(self):
        self.assertRaises(exceptions.InvalidArgument, self.driver.confirm,
                          None)

    def test_reserve_yields_a_cidr(self):
        with self.driver.reserve("net-1", scope="r") as cidr:
            self.assertIn(cidr, SMALL_POOL_CIDRS)

    def test_reserve_reraises_the_error(self):
        def body():
            with self.driver.reserve("net-1", scope="r"):
                raise RuntimeError("subnet creation failed")

        self.assertRaises(RuntimeError, body)
        self.assertFalse(self._snapshot())


class StatefulContractTests(DriverContractTests):
    """The contract of a driver that keeps its allocations.

    :cvar keeps_confirmed: whether it keeps an allocation once confirmed;
        False for a driver that keeps reservations only (``lock``), whose
        confirmed CIDRs only ``taken`` records.
    """

    keeps_confirmed = True

    def _snapshot(self):
        return sorted((a.owner, a.cidr) for a in self.driver.list())

    def test_announces_state(self):
        self.assertTrue(self.driver.has(caps.Capability.KEEPS_STATE))

    def test_reserve_confirms_the_allocation(self):
        with self.driver.reserve("net-1", scope="r") as cidr:
            pass
        held = self.driver.get("net-1")
        if not self.keeps_confirmed:
            self.assertIsNone(held)
            return
        self.assertEqual(cidr, held.cidr)
        self.assertTrue(held.confirmed)

    def test_reserve_releases_on_error(self):
        def body():
            with self.driver.reserve("net-1", scope="r"):
                raise RuntimeError("subnet creation failed")

        self.assertRaises(RuntimeError, body)
        self.assertIsNone(self.driver.get("net-1"))

    def test_reserve_keeps_an_allocation_it_did_not_make(self):
        # A reserve whose body fails releases what it allocated, never
        # what the owner held already: that subnet exists in Neutron.
        if not self.keeps_confirmed:
            self.skipTest("the driver keeps nothing once confirmed")
        cidr = self.driver.allocate("net-1", scope="r1")
        self.driver.confirm("net-1")

        def body():
            with self.driver.reserve("net-1", scope="r1") as again:
                self.assertEqual(cidr, again)
                raise RuntimeError("subnet creation failed")

        self.assertRaises(RuntimeError, body)
        held = self.driver.get("net-1")
        self.assertIsNotNone(held)
        self.assertEqual(cidr, held.cidr)
        self.assertTrue(held.confirmed)
        self.assertNotEqual(cidr, self.driver.allocate("net-2", scope="r1"))

    def test_reserve_keeps_an_unconfirmed_allocation_it_did_not_make(self):
        cidr = self.driver.allocate("net-1", scope="r1")

        def body():
            with self.driver.reserve("net-1", scope="r1"):
                raise RuntimeError("subnet creation failed")

        self.assertRaises(RuntimeError, body)
        self.assertEqual(cidr, self.driver.get("net-1").cidr)

    def test_allocate_is_idempotent_per_owner(self):
        first = self.driver.allocate("net-1", scope="r")
        self.assertEqual(first, self.driver.allocate("net-1", scope="r"))

    def test_no_overlap_within_a_scope(self):
        cidrs = [self.driver.allocate("net-%d" % i, scope="r")
                 for i in range(4)]
        self.assertEqual(sorted(SMALL_POOL_CIDRS), sorted(cidrs))
        e = self.assertRaises(exceptions.PoolExhausted, self.driver.allocate,
                              "net-5", scope="r")
        self.assertIn("4 allocated", str(e))

    def test_allocations_and_taken_both_count(self):
        self.driver.allocate("net-1", scope="r", taken=SMALL_POOL_CIDRS[1:])
        e = self.assertRaises(exceptions.PoolExhausted, self.driver.allocate,
                              "net-2", scope="r",
                              taken=SMALL_POOL_CIDRS[1:])
        self.assertIn("1 allocated, 3 taken", str(e))

    def test_scopes_are_independent(self):
        a = [self.driver.allocate("a-%d" % i, scope="router-a")
             for i in range(4)]
        b = [self.driver.allocate("b-%d" % i, scope="router-b")
             for i in range(4)]
        self.assertEqual(sorted(a), sorted(b))

    def no_grace(self):
        """For a driver that holds released CIDRs: no grace period.

        Off the router (taken), a released CIDR is then free to the next
        allocation.
        """
        self.driver = self.make_driver(release_grace=0)

    def test_release_frees_the_cidr(self):
        if self.driver.has(caps.Capability.HOLDS_RELEASED):
            self.no_grace()
        cidrs = [self.driver.allocate("net-%d" % i, scope="r")
                 for i in range(4)]
        self.assertTrue(self.driver.release("net-2"))
        self.assertFalse(self.driver.release("net-2"))
        self.assertIsNone(self.driver.get("net-2"))
        self.assertEqual(cidrs[2], self.driver.allocate("net-9", scope="r"))

    def test_released_cidr_is_held_while_on_the_router(self):
        held = self.driver.has(caps.Capability.HOLDS_RELEASED)
        if held:
            self.no_grace()
        cidr = self.driver.allocate("net-1", scope="r")
        self.driver.confirm("net-1")
        self.assertEqual(self.keeps_confirmed, self.driver.release("net-1"))
        # The owner is free at once, whatever happens to its CIDR.
        self.assertIsNone(self.driver.get("net-1"))
        others = [self.driver.allocate("net-%d" % i, scope="r",
                                       taken=[cidr]) for i in range(2, 5)]
        self.assertNotIn(cidr, others)
        if held:
            self.assertEqual([("net-1", cidr)],
                             [(a.owner, a.cidr) for a in
                              self.driver.list_released(scope="r")])
            self.assertEqual((3, 1), (
                len(self.driver.list(scope="r")),
                self.driver.usage(scope="r")["released"]))
        else:
            self.assertEqual([], self.driver.list_released())
        # Its subnet left the router: the next allocation gets it.
        self.assertEqual(cidr, self.driver.allocate("net-5", scope="r"))
        self.assertEqual([], self.driver.list_released())

    def test_integer_ids_are_their_strings(self):
        cidr = self.driver.allocate(42, scope=7)
        held = self.driver.get("42")
        self.assertEqual(("42", cidr, "7"),
                         (held.owner, held.cidr, held.scope))
        self.assertEqual(held, self.driver.get(42))
        self.assertEqual(cidr, self.driver.allocate("42", scope="7"))
        self.assertEqual([held], self.driver.list(scope=7))
        self.driver.confirm(42)
        self.assertEqual(self.keeps_confirmed, self.driver.release(42))
        self.assertIsNone(self.driver.get("42"))

    def test_release_scope_frees_that_scope_only(self):
        for i in range(3):
            self.driver.allocate("a-%d" % i, scope="ra")
        self.driver.allocate("b-0", scope="rb")
        self.assertEqual(3, self.driver.release_scope("ra"))
        self.assertEqual([], self.driver.list(scope="ra"))
        self.assertEqual(["b-0"],
                         [a.owner for a in self.driver.list(scope="rb")])
        self.assertEqual(0, self.driver.release_scope("ra"))

    def test_get_and_list(self):
        c1 = self.driver.allocate("net-1", scope="r1")
        c2 = self.driver.allocate("net-2", scope="r2")
        if self.keeps_confirmed:
            self.driver.confirm("net-1")
            self.driver.confirm("net-2")
        got = self.driver.get("net-1")
        self.assertIsInstance(got, allocation.Allocation)
        self.assertEqual(("net-1", c1, "r1", 4),
                         (got.owner, got.cidr, got.scope, got.ip_version))
        self.assertIsNone(self.driver.get("net-3"))
        self.assertEqual([("net-1", c1)],
                         [(a.owner, a.cidr) for a in self.driver.list("r1")])
        self.assertEqual({("net-1", c1), ("net-2", c2)},
                         {(a.owner, a.cidr) for a in self.driver.list()})

    def test_usage_counts_the_scope(self):
        self.driver.allocate("net-1", scope="r")
        self.driver.allocate("net-2", scope="r")
        usage = self.driver.usage(scope="r")
        self.assertEqual((4, 2, 2), (usage["size"], usage["allocated"],
                                     usage["free"]))


class StatelessContractTests(DriverContractTests):
    """The contract of a driver that keeps nothing between calls."""

    def test_announces_no_state(self):
        self.assertFalse(self.driver.has(caps.Capability.KEEPS_STATE))

    def test_stateless_get_and_list_say_so(self):
        e = self.assertRaises(exceptions.NotSupported, self.driver.get, "n")
        self.assertIn("no state", str(e))
        self.assertRaises(exceptions.NotSupported, self.driver.list)

    def test_stateless_release_returns_false(self):
        self.driver.allocate("net-1")
        self.assertFalse(self.driver.release("net-1"))
