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

"""The Murano adapter against a stand-in Neutron client."""

import logging

import fixtures

from murano_cidr.engine.drivers import stateless
from murano_cidr.engine.integration import murano
from murano_cidr import exceptions
from murano_cidr.operator.operations import reconciling
from murano_cidr.tests import base

ROUTER = "9f1c2f8e-5a5b-4c3e-8d53-1e2f3a4b5c6d"
OTHER_ROUTER = "0b6e7d3c-2a1f-4e5d-9c8b-7a6f5e4d3c2b"
PROJECT = "8c1751e0ce714736a63fee3c776164da"
OTHER_PROJECT = "75c0eb79ff4a42b0ae4973c8375ddf40"


class FakeNeutron(object):
    """Answers ``list_ports``/``list_subnets`` as python-neutronclient does.

    :param ports: port dictionaries, as Neutron returns them.
    :param subnets: subnet dictionaries visible to the client.
    """

    def __init__(self, ports=(), subnets=()):
        self.ports = list(ports)
        self.subnets = list(subnets)
        self.calls = []

    def list_ports(self, retrieve_all=True, **filters):
        self.calls.append(("list_ports", filters))
        ports = [p for p in self.ports
                 if all(p.get(k) == v for k, v in filters.items())]
        return {"ports": ports}

    def list_subnets(self, retrieve_all=True, **filters):
        self.calls.append(("list_subnets", filters))
        wanted = filters.get("id")
        return {"subnets": [s for s in self.subnets
                            if wanted is None or s["id"] in wanted]}


def subnet(subnet_id, cidr, project=PROJECT):
    version = 6 if ":" in cidr else 4
    return {"id": subnet_id, "cidr": cidr, "ip_version": version,
            "name": "subnet-" + subnet_id, "network_id": "net-" + subnet_id,
            "tenant_id": project, "project_id": project,
            "enable_dhcp": True, "gateway_ip": None,
            "allocation_pools": [], "dns_nameservers": [],
            "host_routes": [], "subnetpool_id": None}


def port(router_id, *subnet_ids, owner="network:router_interface",
         project=PROJECT):
    return {"id": "port-" + "-".join(subnet_ids), "device_id": router_id,
            "device_owner": owner, "admin_state_up": True,
            "status": "ACTIVE", "tenant_id": project, "project_id": project,
            "network_id": "net-" + subnet_ids[0],
            "mac_address": "fa:16:3e:00:00:01",
            "fixed_ips": [{"subnet_id": s, "ip_address": "192.0.2.1"}
                          for s in subnet_ids]}


class NeutronClientException(Exception):
    """Stands for neutronclient's (or keystoneauth's) own errors."""


class FailingNeutron(FakeNeutron):
    """A client whose ``failing`` method raises NeutronClientException."""

    def __init__(self, failing, **kwargs):
        super().__init__(**kwargs)
        self.failing = failing

    def list_ports(self, retrieve_all=True, **filters):
        if self.failing == "list_ports":
            raise NeutronClientException("503 Service Unavailable")
        return super().list_ports(retrieve_all, **filters)

    def list_subnets(self, retrieve_all=True, **filters):
        if self.failing == "list_subnets":
            raise NeutronClientException("401 Unauthorized")
        return super().list_subnets(retrieve_all, **filters)


class SpyDriver(stateless.StatelessDriver):
    """A stateless driver that records what the adapter passes it."""

    name = "spy"

    def __init__(self, conf):
        super().__init__(conf)
        self.calls = []

    def allocate(self, owner, scope=None, taken=(), ip_version=4):
        self.calls.append(("allocate", owner, scope, taken, ip_version))
        return super().allocate(owner, scope=scope, taken=taken,
                                ip_version=ip_version)

    def pick(self, owner, pool, free_map):
        return free_map.nth_free(0)

    def confirm(self, owner):
        self.calls.append(("confirm", owner))

    def release(self, owner):
        self.calls.append(("release", owner))
        return True


def router_cidrs(client, router_id):
    """The engine's reading of a router's CIDRs."""
    return murano.RouterReader(client, router_id)()


class TestRouterCidrs(base.TestCase):

    def test_reads_the_subnets_on_the_router_only(self):
        client = FakeNeutron(
            ports=[port(ROUTER, "a"), port(ROUTER, "b", "c"),
                   port(ROUTER, "ext", owner="network:router_gateway",
                        project=""),
                   port(OTHER_ROUTER, "d")],
            subnets=[subnet("a", "10.0.1.0/24"),
                     subnet("b", "10.0.2.0/24"),
                     subnet("c", "fd00:1::/64"),
                     subnet("ext", "172.24.4.0/24", project=""),
                     subnet("d", "10.0.4.0/24"),
                     subnet("e", "10.0.5.0/24", project=OTHER_PROJECT)])
        self.assertEqual(
            ["10.0.1.0/24", "10.0.2.0/24", "fd00:1::/64", "172.24.4.0/24"],
            router_cidrs(client, ROUTER))
        # Both calls filtered: the project's other subnets are not listed.
        self.assertEqual([("list_ports", {"device_id": ROUTER}),
                          ("list_subnets", {"id": ["a", "b", "c", "ext"]})],
                         client.calls)

    def test_subnet_the_client_cannot_see_is_left_out(self):
        # An HA router's ports sit on a subnet of another project, which a
        # project's client does not list.
        client = FakeNeutron(
            ports=[port(ROUTER, "a"),
                   port(ROUTER, "ha", owner="network:router_ha_interface",
                        project="")],
            subnets=[subnet("a", "10.0.1.0/24")])
        self.assertEqual(["10.0.1.0/24"], router_cidrs(client, ROUTER))

    def test_router_without_ports_lists_no_subnets(self):
        client = FakeNeutron(subnets=[subnet("a", "10.0.1.0/24")])
        self.assertEqual([], router_cidrs(client, ROUTER))
        self.assertEqual(["list_ports"], [c[0] for c in client.calls])

    def test_no_router_asks_neutron_nothing(self):
        client = FakeNeutron(ports=[port(ROUTER, "a")],
                             subnets=[subnet("a", "10.0.1.0/24")])
        for router_id in (None, ""):
            self.assertEqual([], router_cidrs(client, router_id))
        self.assertEqual([], client.calls)

    def test_malformed_answer_is_a_clear_error(self):
        client = FakeNeutron(ports=[port(ROUTER, "a")])
        client.list_subnets = lambda **kw: {"networks": []}
        e = self.assertRaises(exceptions.BackendUnavailable,
                              router_cidrs, client, ROUTER)
        self.assertIn("Neutron", str(e))
        self.assertIn(ROUTER, str(e))

    def test_client_errors_become_backend_unavailable(self):
        for failing, text in (("list_ports", "503 Service Unavailable"),
                              ("list_subnets", "401 Unauthorized")):
            client = FailingNeutron(failing, ports=[port(ROUTER, "a")],
                                    subnets=[subnet("a", "10.0.1.0/24")])
            e = self.assertRaises(exceptions.BackendUnavailable,
                                  router_cidrs, client, ROUTER)
            self.assertIsInstance(e.__cause__, NeutronClientException)
            self.assertEqual(
                "Neutron is unavailable: %s failed while reading the "
                "subnets of router %s: NeutronClientException: %s"
                % (failing, ROUTER, text), str(e))


class TestRouterListing(base.TestCase):

    def test_each_router_with_what_it_carries(self):
        client = FakeNeutron(
            ports=[port(ROUTER, "a", "b"), port(OTHER_ROUTER, "c"),
                   port(OTHER_ROUTER, "hidden")],
            subnets=[subnet("a", "10.0.1.0/24"), subnet("b", "10.0.2.0/24"),
                     subnet("c", "10.0.1.0/24")])
        listing = reconciling.router_listing(
            client, [ROUTER, OTHER_ROUTER, ROUTER, "empty-router"])
        self.assertEqual({ROUTER: ["10.0.1.0/24", "10.0.2.0/24"],
                          OTHER_ROUTER: ["10.0.1.0/24"],
                          "empty-router": []}, listing.cidrs)
        self.assertEqual([OTHER_ROUTER], list(listing.incomplete))
        self.assertIn("hidden", listing.incomplete[OTHER_ROUTER])
        self.assertIn(("list_subnets", {"id": ["a", "b"]}), client.calls)
        # Three routers, one port listing each; no subnet listing for none.
        self.assertEqual(3, sum(c[0] == "list_ports" for c in client.calls))
        self.assertEqual(2, sum(c[0] == "list_subnets" for c in client.calls))

    def test_client_errors_become_backend_unavailable(self):
        for failing in ("list_ports", "list_subnets"):
            client = FailingNeutron(failing, ports=[port(ROUTER, "a")],
                                    subnets=[subnet("a", "10.0.1.0/24")])
            e = self.assertRaises(exceptions.BackendUnavailable,
                                  reconciling.router_listing, client, [ROUTER])
            self.assertIsInstance(e.__cause__, NeutronClientException)
        e = self.assertRaises(
            exceptions.BackendUnavailable, reconciling.router_listing,
            FakeNeutron(ports=[{"id": "p", "device_id": ROUTER}]), [ROUTER])
        self.assertIn("missing or malformed", str(e))


class TestGetAvailableCidr(base.TestCase):

    def setUp(self):
        super().setUp()
        # Four /24s: 10.20.0.0/24 .. 10.20.3.0/24.
        self.config(pool_cidrs=["10.20.0.0/22"], subnet_prefixlen=24)

    def make(self, driver_name):
        self.config(driver=driver_name)
        adapter = murano.NetworkCidrAllocator(self.conf)
        self.addCleanup(adapter.close)
        return adapter

    def test_never_returns_a_cidr_on_the_router(self):
        client = FakeNeutron(
            ports=[port(ROUTER, "a"), port(ROUTER, "b"), port(ROUTER, "c")],
            subnets=[subnet("a", "10.20.0.0/24"), subnet("b", "10.20.1.0/24"),
                     subnet("c", "10.20.3.0/24")])
        for driver_name in ("random", "legacy"):
            adapter = self.make(driver_name)
            for i in range(20):
                self.assertEqual(
                    "10.20.2.0/24",
                    adapter.get_available_cidr(client, ROUTER, "net-%d" % i))

    def test_subnets_of_other_routers_and_projects_do_not_block(self):
        client = FakeNeutron(
            ports=[port(OTHER_ROUTER, "a", project=OTHER_PROJECT)],
            subnets=[subnet("a", "10.20.0.0/24", project=OTHER_PROJECT),
                     subnet("b", "10.20.1.0/24", project=OTHER_PROJECT),
                     subnet("c", "10.20.2.0/24")])
        self.config(pool_cidrs=["10.20.0.0/24"])
        adapter = self.make("random")
        self.assertEqual("10.20.0.0/24",
                         adapter.get_available_cidr(client, ROUTER, "net-1"))

    def test_router_with_no_ports(self):
        client = FakeNeutron(subnets=[subnet("a", "10.20.0.0/24")])
        adapter = self.make("legacy")
        cidr = adapter.get_available_cidr(client, ROUTER, "net-1")
        self.assertIn(cidr, ["10.20.%d.0/24" % i for i in range(4)])
        self.assertEqual(["list_ports"], [c[0] for c in client.calls])

    def test_full_router_raises_pool_exhausted(self):
        client = FakeNeutron(
            ports=[port(ROUTER, "a")],
            subnets=[subnet("a", "10.20.0.0/22")])
        adapter = self.make("random")
        e = self.assertRaises(exceptions.PoolExhausted,
                              adapter.get_available_cidr, client, ROUTER,
                              "net-1")
        self.assertIn(ROUTER, str(e))

    def test_taken_is_passed_as_a_callable_read_by_the_driver(self):
        client = FakeNeutron(ports=[port(ROUTER, "a")],
                             subnets=[subnet("a", "10.20.0.0/24")])
        spy = SpyDriver(self.conf)
        adapter = murano.NetworkCidrAllocator(driver=spy)
        self.assertEqual("10.20.1.0/24",
                         adapter.get_available_cidr(client, ROUTER, "net-1"))
        (call,) = spy.calls
        _, owner, scope, taken, ip_version = call
        self.assertEqual(("net-1", ROUTER, 4), (owner, scope, ip_version))
        self.assertTrue(callable(taken))
        # The driver, not the adapter, decides when the router is read: a
        # subnet plugged in meanwhile is seen by the next read.
        client.ports.append(port(ROUTER, "b"))
        client.subnets.append(subnet("b", "10.20.1.0/24"))
        self.assertEqual(["10.20.0.0/24", "10.20.1.0/24"], taken())

    def test_no_router_means_no_scope_and_nothing_taken(self):
        client = FakeNeutron(ports=[port(ROUTER, "a")],
                             subnets=[subnet("a", "10.20.0.0/24")])
        spy = SpyDriver(self.conf)
        adapter = murano.NetworkCidrAllocator(driver=spy)
        self.assertEqual("10.20.0.0/24",
                         adapter.get_available_cidr(client, None, "net-1"))
        self.assertIsNone(spy.calls[0][2])
        self.assertEqual([], client.calls)

    def test_ipv6(self):
        self.config(ipv6_pool_cidrs=["fd00:20::/63"],
                    ipv6_subnet_prefixlen=64)
        client = FakeNeutron(
            ports=[port(ROUTER, "a", "b")],
            subnets=[subnet("a", "fd00:20::/64"), subnet("b", "10.20.0.0/24")])
        adapter = self.make("random")
        self.assertEqual("fd00:20:0:1::/64",
                         adapter.get_available_cidr(client, ROUTER, "net-1",
                                                    ip_version=6))

    def test_neutron_error_inside_allocate_allocates_nothing(self):
        self.config(pool_cidrs=["10.20.0.0/23"])
        adapter = self.make("lock")
        failing = FailingNeutron("list_subnets", ports=[port(ROUTER, "a")],
                                 subnets=[subnet("a", "10.20.0.0/24")])
        e = self.assertRaises(exceptions.BackendUnavailable,
                              adapter.get_available_cidr, failing, ROUTER,
                              "net-1")
        self.assertIsInstance(e.__cause__, NeutronClientException)
        self.assertEqual([], adapter.driver.list())
        # The scope's lock was let go: the next deployment gets the CIDR.
        client = FakeNeutron(ports=[port(ROUTER, "a")],
                             subnets=[subnet("a", "10.20.0.0/24")])
        self.assertEqual("10.20.1.0/24",
                         adapter.get_available_cidr(client, ROUTER, "net-2"))

    def test_bad_net_id_changes_nothing_and_reads_nothing(self):
        client = FakeNeutron(ports=[port(ROUTER, "a")],
                             subnets=[subnet("a", "10.20.0.0/24")])
        adapter = self.make("random")
        self.assertRaises(exceptions.InvalidArgument,
                          adapter.get_available_cidr, client, ROUTER, "")
        self.assertEqual([], client.calls)

    def test_confirm_and_release_reach_the_driver(self):
        spy = SpyDriver(self.conf)
        adapter = murano.NetworkCidrAllocator(driver=spy)
        adapter.confirm_cidr("net-1")
        self.assertTrue(adapter.release_cidr("net-1"))
        self.assertEqual([("confirm", "net-1"), ("release", "net-1")],
                         spy.calls)

    def test_release_on_a_stateless_driver_is_false_not_an_error(self):
        adapter = self.make("random")
        adapter.confirm_cidr("net-1")
        self.assertFalse(adapter.release_cidr("net-1"))

    def test_a_store_of_one_host_is_warned_about(self):
        def warnings(driver, **database):
            self.config(driver=driver)
            for name, value in database.items():
                self.config_fixture.config(group="cidr_allocator_database",
                                           **{name: value})
            log = self.useFixture(fixtures.FakeLogger(
                name="murano_cidr.engine.integration.murano",
                level=logging.WARNING))
            murano.NetworkCidrAllocator(self.conf).close()
            return log.output

        self.assertIn("The db driver keeps its state in the SQLite "
                      "database", warnings("db"))
        self.assertIn("set [cidr_allocator_database] connection",
                      warnings("db"))
        self.assertIn("The lock driver keeps its state in file locks",
                      warnings("lock"))
        self.assertEqual("", warnings("random"))
        self.assertEqual("", warnings(
            "db", connection="postgresql+psycopg2://u:p@db.example.org/m"))

    def test_unknown_driver_fails_at_construction(self):
        self.config(driver="no-such-driver")
        e = self.assertRaises(exceptions.DriverNotFound,
                              murano.NetworkCidrAllocator, self.conf)
        self.assertIn("random", str(e))
