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

"""Murano's own engine tests, on the engine as the plugin changes it.

The ``NetworkExplorer`` stand-in of every family the engine plugin knows
(see :mod:`murano_cidr.tests.murano_engines`), changed as the plugin
changes it, runs the tests Murano's own ``test_net_explorer`` runs against
its engine, with the integer ids those tests pass (``router_id = 12``,
``net_id = 144``), on every driver.
"""

from unittest import mock

import fixtures
import netaddr
import testscenarios

from murano_cidr.engine.drivers import capabilities as caps
from murano_cidr.engine.integration import murano as adapter
from murano_cidr.engine.integration import plugin
from murano_cidr.operator.drivers.db import migration
from murano_cidr.tests import base
from murano_cidr.tests import murano_engines
from murano_cidr.tests.unit.integration import test_murano as fakes

load_tests = testscenarios.load_tests_apply_scenarios

ROUTER_ID = 12
NET_ID = 144
#: Murano's default pool since Liberty: 256 /24s under 10.0.0.0/16.
POOL = netaddr.IPNetwork("10.0.0.0/16")


def _prepare_db(test):
    migration.upgrade(test.conf)


_FAMILIES = [(f.name, {"family": f}) for f in murano_engines.FAMILIES
             if f.name in plugin.KNOWN_EXPLORERS]
_STATELESS_DRIVERS = [
    ("legacy", {"driver_name": "legacy", "prepare": None}),
    ("random", {"driver_name": "random", "prepare": None}),
]
#: The drivers that remember what they allocated.
_STATEFUL_DRIVERS = [
    ("lock", {"driver_name": "lock", "prepare": None}),
    ("db", {"driver_name": "db", "prepare": _prepare_db}),
]
_DRIVERS = _STATELESS_DRIVERS + _STATEFUL_DRIVERS


class EngineTestCase(base.TestCase):
    """A stand-in engine of one family as the plugin changes it."""

    family = _FAMILIES[0][1]["family"]
    driver_name = "legacy"
    prepare = None

    def setUp(self):
        super().setUp()
        self.conf.register_opts(murano_engines.NETWORKING_OPTS,
                                group="networking")
        self.config(driver=self.driver_name,
                    ipv6_pool_cidrs=["fd00:10::/56"])
        if self.prepare is not None:
            self.prepare(self)
        for name in ("nclient", "auth_utils", "helpers"):
            self.useFixture(fixtures.MockPatchObject(
                murano_engines, name, mock.MagicMock()))
        self.useFixture(fixtures.MockPatchObject(murano_engines, "CONF",
                                                 self.conf))
        adapter.reset_shared_allocator()
        self.addCleanup(adapter.reset_shared_allocator)
        self.allocator = adapter.shared_allocator(self.conf)
        self.engine_class = murano_engines.build_engine(self.family)

    def make_engine(self, client=None):
        """Build the engine the way MuranoPL does on its family."""
        if client is not None:
            murano_engines.nclient.Client.return_value = client
        return self.engine_class(mock.MagicMock(), "test-region")

    @property
    def driver(self):
        return self.allocator.driver


class TestEngineFamilies(EngineTestCase):

    scenarios = testscenarios.multiply_scenarios(_FAMILIES, _DRIVERS)

    # -- what Murano's test_net_explorer runs --------------------------------

    def test_get_available_cidr(self):
        engine = self.make_engine()
        cidr = engine.get_available_cidr(ROUTER_ID, NET_ID)
        self.assertIsNotNone(cidr)
        self.assertIn(netaddr.IPNetwork(cidr), POOL)
        self.assertEqual(24, netaddr.IPNetwork(cidr).prefixlen)

    def test_get_cidr_none_router(self):
        self.assertEqual([], self.make_engine()._get_cidrs_taken_by_router(
            None))

    def test_list(self):
        engine = self.make_engine()
        client = engine._neutron
        self.assertEqual(client.list_networks()["networks"],
                         engine.list_networks())
        self.assertEqual(client.list_subnets()["subnets"],
                         engine.list_subnetworks())
        self.assertEqual(client.list_ports()["ports"], engine.list_ports())
        self.assertEqual(self.conf.networking.default_dns,
                         engine.get_default_dns())

    def test_get_ext_network_id_router(self):
        self.assertIsNone(self.make_engine()
                          .get_external_network_id_for_router(ROUTER_ID))

    # -- what the plugin changes ----------------------------------------------

    def test_signatures_are_murano_s(self):
        for name, expected in sorted(self.family.signatures.items()):
            self.assertEqual(expected, murano_engines.signature(
                self.engine_class, name), name)

    def test_router_subnets_are_never_handed_out(self):
        on_router = ["10.0.%d.0/24" % i for i in range(0, 256, 2)]
        client = fakes.FakeNeutron(
            ports=[fakes.port(ROUTER_ID, "s%d" % i)
                   for i in range(len(on_router))],
            subnets=[fakes.subnet("s%d" % i, c)
                     for i, c in enumerate(on_router)])
        engine = self.make_engine(client)
        for net_id in range(NET_ID, NET_ID + 20):
            cidr = engine.get_available_cidr(ROUTER_ID, net_id)
            self.assertNotIn(cidr, on_router)
        self.assertIn(("list_ports", {"device_id": ROUTER_ID}),
                      client.calls)

    def test_release_of_nothing_is_not_an_error(self):
        self.assertFalse(self.make_engine().release_cidr(NET_ID + 1))

    def test_ip_version(self):
        engine = self.make_engine()
        cidr = engine.get_available_cidr(ROUTER_ID, NET_ID + 6, 6)
        self.assertIn(netaddr.IPNetwork(cidr),
                      netaddr.IPNetwork("fd00:10::/56"))


class TestStatefulEngineFamilies(EngineTestCase):
    """What only a driver that remembers its allocations can show."""

    scenarios = testscenarios.multiply_scenarios(_FAMILIES,
                                                 _STATEFUL_DRIVERS)

    def setUp(self):
        super().setUp()
        self.assertTrue(self.driver.has(caps.Capability.KEEPS_STATE))

    def test_int_ids_are_kept_as_strings(self):
        engine = self.make_engine()
        cidr = engine.get_available_cidr(ROUTER_ID, NET_ID)
        self.assertEqual(cidr, engine.get_available_cidr("12", "144"))
        held = self.driver.get("144")
        self.assertEqual(("144", "12", cidr, False),
                         (held.owner, held.scope, held.cidr, held.confirmed))
        engine.confirm_cidr(NET_ID)

    def test_release_frees_the_int_owner(self):
        engine = self.make_engine()
        engine.get_available_cidr(ROUTER_ID, NET_ID)
        self.assertTrue(engine.release_cidr(NET_ID))
        self.assertFalse(engine.release_cidr("144"))
        self.assertIsNone(self.driver.get("144"))
