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

from unittest import mock

import fixtures
import netaddr
import testtools

from murano_cidr.engine import pool
from murano_cidr.engine import taken as taken_mod
from murano_cidr import exceptions
from murano_cidr.operator.drivers import records
from murano_cidr.tests.unit import murano_reference


def _taken(cidrs, version=4):
    return taken_mod.TakenSet.from_taken(cidrs, version)


class TestMuranoGeometry(testtools.TestCase):

    SETTINGS = [
        ("10.0.0.0", 250, 250),
        ("10.0.0.0", 20, 250),
        ("10.0.0.0", 1, 250),
        ("10.0.0.0", 2, 250),
        ("10.0.0.0", 3, 250),
        ("10.0.0.0", 100, 100),
        ("10.0.0.0", 256, 256),
        ("10.0.0.0", 257, 255),
        ("192.168.0.0", 5, 30),
        ("172.16.0.0", 1000, 60),
        ("10.0.0.0", 4096, 250),
        ("10.128.0.0", 33, 3),
        ("10.0.0.0", 65536, 200),
    ]

    def test_candidates_equal_murano(self):
        for template, envs, hosts in self.SETTINGS:
            expected = murano_reference.candidates(template, envs, hosts)
            got = pool.Pool.from_murano(template, envs, hosts)
            self.assertEqual(len(expected), len(got), (template, envs, hosts))
            self.assertEqual(expected, list(got), (template, envs, hosts))

    def test_defaults(self):
        p = pool.Pool.from_murano()
        self.assertEqual(256, len(p))
        self.assertEqual(24, p.prefixlen)
        self.assertEqual("10.0.0.0/16", str(p))

    def test_old_default(self):
        p = pool.Pool.from_murano("10.0.0.0", 20, 250)
        self.assertEqual(32, len(p))
        self.assertEqual("10.0.0.0/19", str(p))
        self.assertEqual("10.0.31.0/24", p.cidr(31))

    def test_non_positive_counts(self):
        for kwargs, option in (({"max_environments": 0}, "max_environments"),
                               ({"max_environments": -3}, "max_environments"),
                               ({"max_hosts": 0}, "max_hosts"),
                               ({"max_hosts": "250"}, "max_hosts")):
            e = self.assertRaises(exceptions.InvalidConfig,
                                  pool.Pool.from_murano, **kwargs)
            self.assertIn(option, str(e))

    def test_template_not_an_address(self):
        for template in ("10.0.0", "ten", "10.0.0.0/16", "", "300.0.0.0"):
            e = self.assertRaises(exceptions.InvalidConfig,
                                  pool.Pool.from_murano, template)
            self.assertIn("env_ip_template", str(e))

    def test_template_ipv6(self):
        e = self.assertRaises(exceptions.InvalidConfig,
                              pool.Pool.from_murano, "fd00::")
        self.assertIn("ipv6_pool_cidrs", str(e))

    def test_template_not_aligned(self):
        e = self.assertRaises(exceptions.InvalidConfig,
                              pool.Pool.from_murano, "10.0.5.0", 20, 250)
        self.assertIn("env_ip_template", str(e))
        self.assertIn("use 10.0.0.0", str(e))

    def test_no_room(self):
        e = self.assertRaises(exceptions.InvalidConfig,
                              pool.Pool.from_murano, "0.0.0.0", 2 ** 20,
                              2 ** 14)
        self.assertIn("more than the 32", str(e))
        e = self.assertRaises(exceptions.InvalidConfig,
                              pool.Pool.from_murano, "10.0.0.0", 20, 2)
        self.assertIn("max_hosts", str(e))

    def test_beyond_the_cap(self):
        e = self.assertRaises(exceptions.InvalidConfig,
                              pool.Pool.from_murano, "0.0.0.0", 2 ** 25, 4)
        self.assertIn("limit", str(e))


class TestExplicitPools(testtools.TestCase):

    def test_several_networks_in_order(self):
        p = pool.Pool.from_cidrs(["192.168.0.0/23", "10.0.0.0/24"], 25)
        self.assertEqual(["192.168.0.0/25", "192.168.0.128/25",
                          "192.168.1.0/25", "192.168.1.128/25",
                          "10.0.0.0/25", "10.0.0.128/25"],
                         [str(c) for c in p])
        self.assertFalse(p.contains("10.0.1.0/25"))

    def test_bad_cidr_is_invalid_cidr(self):
        p = pool.Pool.from_cidrs(["10.0.0.0/24"], 25)
        for bad in ("10.0.0.0/99", "not-a-cidr", "", 42):
            e = self.assertRaises(exceptions.InvalidCidr, p.contains, bad)
            self.assertIn(repr(bad), str(e))
        self.assertTrue(p.contains(" 10.0.0.128/25 "))
        self.assertTrue(p.contains(netaddr.IPNetwork("10.0.0.128/25")))

    def test_ipv6(self):
        p = pool.Pool.from_cidrs(["fd00::/48"], 64)
        self.assertEqual(65536, len(p))
        self.assertEqual(6, p.version)
        self.assertEqual("fd00:0:0:ffff::/64", p.cidr(65535))
        self.assertEqual(6, p[0].version)
        self.assertFalse(str(p[1]).startswith("::ffff:"))

    def test_huge_pool_is_not_materialised(self):
        # NOTE: netaddr's subnet() is the way to list a pool's candidates;
        # building and indexing 4 million /30s must never call it.
        self.useFixture(fixtures.MockPatchObject(
            netaddr.IPNetwork, "subnet",
            side_effect=AssertionError("the pool was enumerated")))
        p = pool.Pool.from_cidrs(["10.0.0.0/8"], 30)
        self.assertEqual(2 ** 22, len(p))
        self.assertEqual("10.0.0.0/30", p.cidr(0))
        self.assertEqual("10.128.0.0/30", p.cidr(2 ** 21))
        self.assertEqual("10.255.255.252/30", p.cidr(len(p) - 1))
        self.assertTrue(p.contains("10.1.2.0/24"))
        free = p.free_map(taken_mod.TakenSet.from_taken(["10.0.0.0/9"], 4))
        self.assertEqual(2 ** 21, free.blocked)
        self.assertEqual("10.128.0.0/30", p.cidr(free.nth_free(0)))
        # Nor is a list of candidates built any other way: whatever the
        # pool and its free map hold is per parent network or per taken
        # interval, a handful of items.
        for obj in (p, free):
            for name, value in vars(obj).items():
                if isinstance(value, (list, tuple, dict, set, range)):
                    self.assertLessEqual(len(value), 2, "%s.%s has %d items"
                                         % (type(obj).__name__, name,
                                            len(value)))

    def test_validation_names_the_option(self):
        cases = [
            (["10.0.0.0/33"], 24, "pool_cidrs"),
            (["nonsense"], 24, "pool_cidrs"),
            ([], 24, "pool_cidrs"),
            (["10.0.0.1/16"], 24, "pool_cidrs"),
            (["10.0.0.0/16", "fd00::/48"], 24, "pool_cidrs"),
            (["10.0.0.0/16", "10.0.128.0/17"], 24, "pool_cidrs"),
            (["10.0.0.0/24"], 16, "subnet_prefixlen"),
            (["10.0.0.0/24"], 31, "subnet_prefixlen"),
            (["10.0.0.0/24"], "24", "subnet_prefixlen"),
            (["0.0.0.0/0"], 30, "subnet_prefixlen"),
        ]
        for cidrs, prefixlen, option in cases:
            e = self.assertRaises(exceptions.InvalidConfig,
                                  pool.Pool.from_cidrs, cidrs, prefixlen)
            self.assertIn(option, str(e), (cidrs, prefixlen))

    def test_version_mismatch(self):
        e = self.assertRaises(exceptions.InvalidConfig, pool.Pool.from_cidrs,
                              ["10.0.0.0/16"], 24, "ipv6_pool_cidrs",
                              "ipv6_subnet_prefixlen", version=6)
        self.assertIn("ipv6_pool_cidrs", str(e))


class TestOverlap(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.pool = pool.Pool.from_cidrs(["10.0.0.0/22"], 24)

    def _free(self, taken):
        fm = self.pool.free_map(_taken(taken))
        return [self.pool.cidr(i) for i in range(len(self.pool))
                if fm.is_free(i)]

    def test_taken_inside_a_candidate(self):
        self.assertEqual(["10.0.0.0/24", "10.0.2.0/24", "10.0.3.0/24"],
                         self._free(["10.0.1.64/26"]))

    def test_taken_containing_candidates(self):
        self.assertEqual(["10.0.0.0/24", "10.0.1.0/24"],
                         self._free(["10.0.2.0/23"]))
        self.assertEqual([], self._free(["10.0.0.0/8"]))

    def test_adjacent_networks_do_not_overlap(self):
        self.assertEqual(["10.0.0.0/24", "10.0.1.0/24", "10.0.2.0/24",
                          "10.0.3.0/24"],
                         self._free(["9.255.255.0/24", "10.0.4.0/24"]))

    def test_host_bits_in_taken(self):
        self.assertEqual(["10.0.0.0/24", "10.0.2.0/24", "10.0.3.0/24"],
                         self._free(["10.0.1.200/24"]))
        self.assertEqual(["10.0.0.0/24", "10.0.2.0/24", "10.0.3.0/24"],
                         self._free(["10.0.1.7"]))

    def test_mixed_versions_in_taken(self):
        self.assertEqual(["10.0.1.0/24", "10.0.2.0/24", "10.0.3.0/24"],
                         self._free(["::/0", "10.0.0.0/24",
                                     netaddr.IPNetwork("fd00::/8")]))

    def test_overlapping_and_duplicate_taken(self):
        self.assertEqual(["10.0.3.0/24"],
                         self._free(["10.0.0.0/24", "10.0.0.0/23",
                                     "10.0.1.0/24", "10.0.2.0/24",
                                     "10.0.2.0/25"]))

    def test_garbage_in_taken(self):
        for bad in (["10.0.0.0/40"], ["x"], [b"10.0.0.0/24"], [None]):
            self.assertRaises(exceptions.InvalidCidr, _taken, bad)

    def test_taken_set_queries(self):
        t = _taken(["10.0.0.0/24", "10.0.1.0/24", "10.0.5.0/24"])
        self.assertEqual(2, len(t))

        def overlaps(cidr):
            net = netaddr.IPNetwork(cidr)
            return t.overlaps(net.first, net.last)

        self.assertTrue(overlaps("10.0.0.0/16"))
        self.assertTrue(overlaps("10.0.1.128/25"))
        self.assertFalse(overlaps("10.0.2.0/24"))
        self.assertEqual([(netaddr.IPAddress("10.0.5.0").value,
                           netaddr.IPAddress("10.0.5.255").value)],
                         t.intervals_within(
                             netaddr.IPAddress("10.0.4.0").value,
                             netaddr.IPAddress("10.0.9.0").value))


class TestParseCache(testtools.TestCase):

    def setUp(self):
        super().setUp()
        taken_mod.clear_parse_cache()
        self.addCleanup(taken_mod.clear_parse_cache)

    def test_a_string_is_parsed_once(self):
        with mock.patch.object(taken_mod, "parse_cidr",
                               wraps=taken_mod.parse_cidr) as parse:
            first = _taken(["10.9.0.0/24", "10.9.1.0/24"])
            second = _taken(["10.9.1.0/24", "10.9.0.0/24"])
        self.assertEqual(2, parse.call_count)
        self.assertEqual(first.intervals(), second.intervals())

    def test_errors_are_not_remembered(self):
        for _ in range(2):
            e = self.assertRaises(exceptions.InvalidCidr,
                                  taken_mod.TakenSet.from_taken,
                                  ["10.0.0.0/24", "10.0.0.0/99"], 4,
                                  "router CIDRs")
            self.assertIn("router CIDRs", str(e))
            self.assertIn("10.0.0.0/99", str(e))


class TestUsage(testtools.TestCase):

    def test_counts_allocations_and_taken_apart(self):
        p = pool.Pool.from_cidrs(["10.0.0.0/22"], 24)
        counts = records.counted(
            p, "r", 2, _taken(["10.0.0.0/24", "10.0.1.0/24"]),
            _taken(["10.0.1.0/24", "10.0.2.7/32"]))
        self.assertEqual({"pool": "10.0.0.0/22", "prefixlen": 24, "size": 4,
                          "allocated": 2, "taken": 1, "free": 1,
                          "used_percent": 75.0, "scope": "r",
                          "ip_version": 4, "allocations": 2,
                          "released": 0}, counts)
        self.assertEqual(2, records.counted(
            p, "r", 1, _taken(["10.0.0.0/23"]), _taken([]))["free"])
