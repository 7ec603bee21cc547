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

"""Pools reaching into special or public address space."""

import logging

import fixtures
import netaddr

from oslo_upgradecheck import upgradecheck

from murano_cidr.engine import allocator
from murano_cidr.engine import pool
from murano_cidr.engine import special_ranges
from murano_cidr import exceptions
from murano_cidr.operator.cmd import status
from murano_cidr.tests import base


class TestRefusedAtBuild(base.TestCase):
    """The allocator refuses such a pool when it is built."""

    def build(self, **settings):
        self.config(driver="random", **settings)
        return allocator.get_allocator(self.conf)

    def test_the_whole_ipv4_space(self):
        e = self.assertRaises(exceptions.InvalidConfig, self.build,
                              pool_cidrs=["0.0.0.0/0"], subnet_prefixlen=24)
        message = str(e)
        self.assertIn("pool_cidrs", message)
        for named in ("127.0.0.0/8 (loopback)", "169.254.0.0/16 (link-local)",
                      "224.0.0.0/4 (multicast)", "0.0.0.0/8 (reserved)",
                      "240.0.0.0/4 (reserved)"):
            self.assertIn(named, message)

    def test_murano_geometry_over_loopback(self):
        e = self.assertRaises(exceptions.InvalidConfig, self.build,
                              env_ip_template="127.0.0.0")
        self.assertIn("env_ip_template", str(e))
        self.assertIn("127.0.0.0/8 (loopback)", str(e))

    def test_one_network_of_several(self):
        e = self.assertRaises(exceptions.InvalidConfig, self.build,
                              pool_cidrs=["10.0.0.0/24", "169.254.0.0/24"],
                              subnet_prefixlen=26)
        self.assertIn("169.254.0.0/16 (link-local)", str(e))

    def test_ipv6(self):
        for cidr, named in (("fe80::/60", "fe80::/10 (link-local)"),
                            ("ff00::/60", "ff00::/8 (multicast)")):
            e = self.assertRaises(exceptions.InvalidConfig, self.build,
                                  ipv6_pool_cidrs=[cidr])
            self.assertIn("ipv6_pool_cidrs", str(e))
            self.assertIn(named, str(e))

    def test_private_pools_build_without_a_warning(self):
        logger = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        for cidrs in (["10.0.0.0/16"], ["172.16.0.0/12"],
                      ["192.168.0.0/16"], ["100.64.0.0/16"]):
            driver = self.build(pool_cidrs=cidrs, subnet_prefixlen=24,
                                ipv6_pool_cidrs=["fd00::/56"])
            driver.close()
        self.build(env_ip_template="10.0.0.0").close()
        self.assertEqual("", logger.output)


class TestPublicWarned(base.TestCase):

    def test_public_ipv4_is_built_with_a_warning(self):
        logger = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        self.config(driver="random", pool_cidrs=["10.0.0.0/8", "11.0.0.0/16"],
                    subnet_prefixlen=24)
        driver = allocator.get_allocator(self.conf)
        self.addCleanup(driver.close)
        self.assertEqual(2 ** 16 + 2 ** 8, len(driver.pool()))
        self.assertIn("publicly routable", logger.output)
        self.assertIn("(11.0.0.0/16)", logger.output)

    def test_upgrade_check_warns(self):
        self.config(pool_cidrs=["11.0.0.0/16"], subnet_prefixlen=24,
                    max_environments=20)
        result = status.Checks(self.conf).check_pool()
        self.assertEqual(upgradecheck.Code.WARNING, result.code)
        self.assertIn("publicly routable addresses (11.0.0.0/16)",
                      result.details)
        self.config(pool_cidrs=["0.0.0.0/0"])
        result = status.Checks(self.conf).check_pool()
        self.assertEqual(upgradecheck.Code.FAILURE, result.code)
        self.assertIn("127.0.0.0/8 (loopback)", result.details)

    def test_public_parts(self):
        self.assertEqual(
            [netaddr.IPNetwork("11.0.0.0/8")],
            special_ranges.public_networks([netaddr.IPNetwork("10.0.0.0/7")]))
        self.assertEqual([], special_ranges.public_networks(
            [netaddr.IPNetwork("2001:db8::/32")]))

    def test_describe_counts_what_it_leaves_out(self):
        self.assertEqual("a, b and 2 more",
                         special_ranges.describe("abcd", shown=2))
        self.assertEqual("a, b", special_ranges.describe("ab", shown=2))


class TestPoolFactories(base.TestCase):

    def test_reserved_ranges_named_once(self):
        refused = special_ranges.refused_ranges(
            [netaddr.IPNetwork("224.0.0.0/3")])
        self.assertEqual([("224.0.0.0/4", "multicast"),
                          ("240.0.0.0/4", "reserved")], refused)

    def test_from_cidrs_and_from_murano(self):
        self.assertRaises(exceptions.InvalidConfig, pool.Pool.from_cidrs,
                          ["192.0.2.0/24"], 26)
        self.assertRaises(exceptions.InvalidConfig, pool.Pool.from_murano,
                          "224.0.0.0")
        self.assertEqual(256, len(pool.Pool.from_murano()))
