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

"""What the adapter asks Neutron, and what it asks under a driver's lock."""

import fixtures

from murano_cidr.engine.drivers.db import allocating
from murano_cidr.engine.integration import murano
from murano_cidr import exceptions
from murano_cidr.operator.operations import reconciling
from murano_cidr.tests import base
from murano_cidr.tests.unit.integration import test_murano as fakes

ROUTER = fakes.ROUTER


class TestRouterReader(base.TestCase):

    def test_reads_again_but_asks_only_for_new_subnets(self):
        client = fakes.FakeNeutron(
            ports=[fakes.port(ROUTER, "a")],
            subnets=[fakes.subnet("a", "10.0.1.0/24"),
                     fakes.subnet("b", "10.0.2.0/24"),
                     fakes.subnet("other", "10.0.9.0/24")])
        read = murano.RouterReader(client, ROUTER)
        self.assertEqual(["10.0.1.0/24"], read())
        del client.calls[:]
        self.assertEqual(["10.0.1.0/24"], read())
        self.assertEqual([("list_ports", {"device_id": ROUTER})],
                         client.calls)
        client.ports.append(fakes.port(ROUTER, "b"))
        del client.calls[:]
        self.assertEqual(["10.0.1.0/24", "10.0.2.0/24"], read())
        self.assertEqual([("list_ports", {"device_id": ROUTER}),
                          ("list_subnets", {"id": ["b"]})], client.calls)

    def test_read_now_reads_at_once_and_a_call_lists_only_the_ports(self):
        client = fakes.FakeNeutron(
            ports=[fakes.port(ROUTER, "a")],
            subnets=[fakes.subnet("a", "10.0.1.0/24")])
        read = murano.RouterReader(client, ROUTER, read_now=True)
        self.assertEqual([("list_ports", {"device_id": ROUTER}),
                          ("list_subnets", {"id": ["a"]})], client.calls)
        del client.calls[:]
        self.assertEqual(["10.0.1.0/24"], read())
        self.assertEqual([("list_ports", {"device_id": ROUTER})],
                         client.calls)

    def test_read_now_without_a_router_asks_nothing(self):
        client = fakes.FakeNeutron(ports=[fakes.port(ROUTER, "a")])
        self.assertEqual([], murano.RouterReader(client, None,
                                                 read_now=True)())
        self.assertEqual([], client.calls)

    def test_a_subnet_unplugged_is_not_taken_any_more(self):
        client = fakes.FakeNeutron(
            ports=[fakes.port(ROUTER, "a"), fakes.port(ROUTER, "b")],
            subnets=[fakes.subnet("a", "10.0.1.0/24"),
                     fakes.subnet("b", "10.0.2.0/24")])
        read = murano.RouterReader(client, ROUTER)
        self.assertEqual(["10.0.1.0/24", "10.0.2.0/24"], read())
        del client.ports[0]
        self.assertEqual(["10.0.2.0/24"], read())

    def test_a_subnet_the_client_cannot_see_is_asked_for_once(self):
        client = fakes.FakeNeutron(
            ports=[fakes.port(ROUTER, "a"), fakes.port(ROUTER, "hidden")],
            subnets=[fakes.subnet("a", "10.0.1.0/24")])
        read = murano.RouterReader(client, ROUTER)
        self.assertEqual(["10.0.1.0/24"], read())
        self.assertEqual(["10.0.1.0/24"], read())
        self.assertEqual(1, sum(c[0] == "list_subnets"
                                for c in client.calls))

    def test_a_subnet_answered_but_not_asked_for_is_ignored(self):
        client = fakes.FakeNeutron(ports=[fakes.port(ROUTER, "a")])
        client.list_subnets = lambda **kw: {"subnets": [
            fakes.subnet("a", "10.0.1.0/24"),
            fakes.subnet("z", "10.0.9.0/24")]}
        self.assertEqual(["10.0.1.0/24"],
                         murano.RouterReader(client, ROUTER)())


class UriLimitedNeutron(fakes.FakeNeutron):
    """Refuses a request whose URI is too long, as python-neutronclient.

    The client raises ``RequestURITooLong`` before sending a request of
    more than 8192 characters; ``list_subnets(id=[...])`` puts every id
    (36 characters, ``id=`` and ``&``) into the query.
    """

    MAX_URI_LEN = 8192
    ENDPOINT = "https://neutron.example.org:9696/v2.0/subnets?"

    def list_subnets(self, retrieve_all=True, **filters):
        query = "&".join("id=%s" % i for i in filters.get("id", ()))
        if len(self.ENDPOINT) + len(query) > self.MAX_URI_LEN:
            raise RuntimeError("RequestURITooLong")
        return super().list_subnets(retrieve_all, **filters)


class TestManySubnets(base.TestCase):
    """A router with hundreds of subnets is read in requests that fit."""

    def setUp(self):
        super().setUp()
        ids = ["%08d-0000-4000-8000-000000000000" % i for i in range(300)]
        self.cidrs = ["10.%d.%d.0/24" % (i // 256, i % 256)
                      for i in range(300)]
        self.client = UriLimitedNeutron(
            ports=[fakes.port(ROUTER, i) for i in ids],
            subnets=[fakes.subnet(i, c) for i, c in zip(ids, self.cidrs)])

    def test_the_router_reader_sees_every_subnet(self):
        self.assertEqual(self.cidrs,
                         murano.RouterReader(self.client, ROUTER)())
        self.assertGreater(sum(c[0] == "list_subnets"
                               for c in self.client.calls), 1)

    def test_reconciling_sees_every_subnet(self):
        listing = reconciling.router_listing(self.client, [ROUTER])
        self.assertEqual(sorted(self.cidrs), sorted(listing.cidrs[ROUTER]))
        self.assertEqual({}, listing.incomplete)


class TestReadingUnderTheDbDriversRowLock(base.TestCase):
    """The db driver reads ``taken`` with its scope's row locked."""

    def setUp(self):
        super().setUp()
        self.use_database("sqlite", self.config_fixture, sync=True)
        self.config(driver="db", pool_cidrs=["10.20.0.0/22"],
                    subnet_prefixlen=24)
        self.adapter = murano.NetworkCidrAllocator(self.conf)
        self.addCleanup(self.adapter.close)
        self.locked = False
        self.at_lock = []
        lock_scope = allocating.lock_scope

        def locking(conn, scope):
            for change in self.at_lock:
                change()
            generation = lock_scope(conn, scope)
            self.locked = True
            return generation

        write = self.adapter.driver.database.write

        def writing(*args, **kwargs):
            try:
                return write(*args, **kwargs)
            finally:
                self.locked = False

        self.useFixture(fixtures.MonkeyPatch(
            "murano_cidr.engine.drivers.db.allocating.lock_scope", locking))
        self.adapter.driver.database.write = writing

    def client(self, *subnets):
        test = self

        class Recording(fakes.FakeNeutron):
            def list_ports(self, retrieve_all=True, **filters):
                test.under_lock.append(("list_ports", test.locked))
                return super().list_ports(retrieve_all, **filters)

            def list_subnets(self, retrieve_all=True, **filters):
                test.under_lock.append(("list_subnets", test.locked))
                return super().list_subnets(retrieve_all, **filters)

        self.under_lock = []
        return Recording(
            ports=[fakes.port(ROUTER, s) for s, _ in subnets],
            subnets=[fakes.subnet(s, cidr) for s, cidr in subnets]
            + [fakes.subnet("elsewhere", "10.20.3.0/24")])

    def test_only_the_ports_are_listed_under_the_row_lock(self):
        client = self.client(("a", "10.20.0.0/24"), ("b", "10.20.1.0/24"))
        cidr = self.adapter.get_available_cidr(client, ROUTER, "net-1")
        self.assertIn(cidr, ["10.20.2.0/24", "10.20.3.0/24"])
        self.assertEqual([("list_ports", True)],
                         [c for c in self.under_lock if c[1]])
        self.assertNotIn(("list_subnets", {}), client.calls)

    def test_a_subnet_plugged_in_before_the_lock_is_never_handed_out(self):
        client = self.client(("a", "10.20.0.0/24"), ("b", "10.20.1.0/24"))

        def plug_c():
            client.ports.append(fakes.port(ROUTER, "c"))
            client.subnets.append(fakes.subnet("c", "10.20.2.0/24"))

        self.at_lock.append(plug_c)
        self.assertEqual("10.20.3.0/24", self.adapter.get_available_cidr(
            client, ROUTER, "net-1"))
        self.assertEqual([("list_ports", True), ("list_subnets", True)],
                         [c for c in self.under_lock if c[1]])
        self.assertIn(("list_subnets", {"id": ["c"]}), client.calls)

    def test_router_full_at_the_lock_is_exhausted(self):
        client = self.client(("a", "10.20.0.0/24"), ("b", "10.20.1.0/24"),
                             ("c", "10.20.2.0/24"))

        def plug_d():
            client.ports.append(fakes.port(ROUTER, "elsewhere"))

        self.at_lock.append(plug_d)
        self.assertRaises(exceptions.PoolExhausted,
                          self.adapter.get_available_cidr, client, ROUTER,
                          "net-1")
        self.assertEqual([], self.adapter.driver.list())
