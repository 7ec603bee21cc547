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

"""Usage per scope."""

from unittest import mock

import netaddr

from murano_cidr import exceptions
from murano_cidr.operator.operations import usage
from murano_cidr.tests import base
from murano_cidr.tests.unit.operations import fakes


class TestUsage(base.TestCase):

    def setUp(self):
        super().setUp()
        self.config(pool_cidrs=["10.0.0.0/22"], subnet_prefixlen=24,
                    ipv6_pool_cidrs=["fd00::/62"])
        self.driver = fakes.FakeStatefulDriver(self.conf, [
            fakes.allocation("a", "10.0.0.0/24", "r1"),
            fakes.allocation("b", "10.0.1.0/24", "r1"),
            fakes.allocation("c", "fd00::/64", "r1"),
            fakes.allocation("d", "10.0.0.0/24", "r2")])

    def test_every_scope(self):
        rows = usage.report(self.driver)
        self.assertEqual(
            [("r1", 4, 2, 2, 0, 2, 50.0), ("r1", 6, 1, 1, 0, 3, 25.0),
             ("r2", 4, 1, 1, 0, 3, 25.0)],
            [(r["scope"], r["ip_version"], r["allocations"], r["allocated"],
              r["taken"], r["free"], r["used_percent"]) for r in rows])
        self.assertEqual("10.0.0.0/22", rows[0]["pool"])
        self.assertEqual(4, rows[0]["size"])

    def test_one_scope_with_taken(self):
        rows = usage.report(self.driver, scope="r1", ip_version=4,
                            taken=["10.0.1.0/24", "10.0.2.128/25",
                                   "192.168.0.0/24"])
        self.assertEqual([(2, 1, 1, 75.0)],
                         [(r["allocated"], r["taken"], r["free"],
                           r["used_percent"]) for r in rows])

    def test_unknown_scope_and_empty_driver(self):
        rows = usage.report(self.driver, scope="nobody", ip_version=4)
        self.assertEqual([("nobody", 0, 4)],
                         [(r["scope"], r["allocated"], r["free"])
                          for r in rows])
        self.driver.allocations.clear()
        self.assertEqual([(None, 4), (None, 6)],
                         [(r["scope"], r["ip_version"])
                          for r in usage.report(self.driver)])

    def test_counts_come_from_the_driver(self):
        # One usage path: the driver's own (the db driver's is SQL).
        with mock.patch.object(self.driver, "usage",
                               wraps=self.driver.usage) as spy:
            rows = usage.report(self.driver, scope="r1", ip_version=4,
                                taken=["10.0.2.0/24"])
        spy.assert_called_once_with(scope="r1", ip_version=4,
                                    taken=[netaddr.IPNetwork("10.0.2.0/24")])
        self.assertEqual([(2, 1, 1)], [(r["allocated"], r["taken"],
                                        r["free"]) for r in rows])

    def test_taken_needs_a_scope(self):
        self.assertRaises(exceptions.InvalidArgument, usage.report,
                          self.driver, taken=["10.0.0.0/24"])
        self.assertRaises(exceptions.InvalidCidr, usage.report,
                          self.driver, scope="r1", taken=["nope"])
