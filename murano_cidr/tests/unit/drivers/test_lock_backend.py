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

"""The ``lock`` driver's lock names and reservation blocks."""

import netaddr

from murano_cidr.engine.drivers.lock import backend
from murano_cidr.engine.drivers.lock import picking
from murano_cidr.tests import base


class TestLockNames(base.TestCase):

    def test_names_are_safe_file_names(self):
        for scope in ("router/1", "a b", None, "x" * 255):
            for cidr in ("10.0.0.0/24", "fd00:1::/64"):
                name = picking.record_name(scope, cidr)
                self.assertNotIn("/", name)
                self.assertLess(len(name), 128)
                self.assertTrue(name.startswith("murano-cidr-"))

    def test_scopes_and_cidrs_get_distinct_names(self):
        names = {picking.record_name(s, c)
                 for s in (None, "None", "r1", "r2")
                 for c in ("10.0.0.0/24", "10.0.0.0/25", "10.0.1.0/24")}
        self.assertEqual(12, len(names))
        self.assertNotEqual(picking.scope_lock_name(None),
                            picking.scope_lock_name("None"))


class TestBlocks(base.TestCase):

    def test_a_larger_subnet_takes_every_block(self):
        self.assertEqual(
            ["10.0.2.0/24", "10.0.3.0/24"],
            [str(b) for b in backend.blocks(
                netaddr.IPNetwork("10.0.2.0/23"), 24)])

    def test_a_smaller_subnet_takes_its_block(self):
        self.assertEqual(
            ["10.0.3.0/24"],
            [str(b) for b in backend.blocks(
                netaddr.IPNetwork("10.0.3.192/26"), 24)])
        self.assertEqual(
            ["fd00:0:0:7::/64"],
            [str(b) for b in backend.blocks(
                netaddr.IPNetwork("fd00:0:0:7:8000::/65"), 64)])

    def test_overlapping_cidrs_share_a_block(self):
        for a, b in (("10.0.2.0/23", "10.0.3.0/24"),
                     ("10.0.0.0/22", "10.0.1.128/25"),
                     ("10.0.1.0/26", "10.0.1.0/25")):
            for prefixlen in (22, 24, 26):
                shared = set(backend.blocks(netaddr.IPNetwork(a), prefixlen))
                shared &= set(backend.blocks(netaddr.IPNetwork(b),
                                             prefixlen))
                self.assertTrue(shared, (a, b, prefixlen))
