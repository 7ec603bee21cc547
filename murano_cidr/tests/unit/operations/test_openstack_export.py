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

"""Building an import file from the openstack client's JSON output."""

import json
import os

from murano_cidr.engine import pool as pool_mod
from murano_cidr.operator import errors
from murano_cidr.operator.operations import importing
from murano_cidr.operator.operations import openstack_export
from murano_cidr.tests import base

POOLS = {4: pool_mod.Pool.from_cidrs(["10.0.0.0/16"], 24)}

SUBNETS = [
    {"ID": "s1", "Name": "a", "Network": "n1", "Subnet": "10.0.1.0/24"},
    {"ID": "s2", "Name": "b", "Network": "n2", "Subnet": "10.0.2.0/24"},
    {"ID": "s2b", "Name": "b6", "Network": "n2", "Subnet": "10.0.9.0/24"},
    {"ID": "ext", "Name": "public", "Network": "pub",
     "Subnet": "172.24.4.0/24"},
]


class TestConvert(base.TestCase):

    def write(self, name, data):
        path = os.path.join(self.state_path, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(data if isinstance(data, str) else json.dumps(data))
        return path

    def test_join(self):
        subnets = self.write("subnets.json", SUBNETS)
        self.write("ports/r1.json", [
            {"ID": "p1", "Fixed IP Addresses": [
                {"subnet_id": "s1", "ip_address": "10.0.1.1"}]},
            {"ID": "gw", "Fixed IP Addresses": [
                {"subnet_id": "ext", "ip_address": "172.24.4.9"}]},
            {"ID": "p2", "Fixed IP Addresses":
                "ip_address='10.0.2.1', subnet_id='s2'"},
            {"ID": "p3", "Fixed IP Addresses": [
                {"subnet_id": "s2b", "ip_address": "10.0.9.1"}]},
            {"ID": "p4", "Fixed IP Addresses": [
                {"subnet_id": "hidden", "ip_address": "10.0.7.1"}]}])
        self.write("ports/r2.json", {"ports": [
            {"id": "p5", "fixed_ips": [{"subnet_id": "s1"}]}]})
        self.write("ports/notes.txt", "ignored")
        result = openstack_export.convert(
            subnets, os.path.join(self.state_path, "ports"), POOLS)
        self.assertEqual(
            [{"scope": "r1", "cidr": "10.0.1.0/24", "owner": "n1"},
             {"scope": "r1", "cidr": "10.0.2.0/24", "owner": "n2"}],
            result.rows)
        reasons = {s: r for _router, s, r in result.skipped}
        self.assertIn("outside the pools", reasons["ext"])
        self.assertIn("network n2 already holds 10.0.2.0/24", reasons["s2b"])
        self.assertIn("another project's subnet", reasons["hidden"])
        # The same network on a second router: one CIDR per owner.
        self.assertIn("network n1 already holds", reasons["s1"])

        # What it builds, import reads.
        rows = importing.read_file(self.write("existing.json", result.rows),
                                   POOLS)
        self.assertEqual([importing.NEW] * 2, [r.status for r in rows])

    def test_host_bits_are_refused_everywhere(self):
        # Issue 32: a CIDR with host bits was read as the network it falls
        # in: converted to that network, and taken as it by reconcile.
        subnets = self.write("subnets.json", [
            {"ID": "s1", "Network": "n1", "Subnet": "10.0.1.5/24"},
            {"ID": "s2", "Network": "n2", "Subnet": "10.0.2.1"}])
        ports = os.path.join(self.state_path, "ports")
        self.write("ports/r1.json", [
            {"ID": "p1", "Fixed IP Addresses": [{"subnet_id": "s1"}]},
            {"ID": "p2", "Fixed IP Addresses": [{"subnet_id": "s2"}]}])
        result = openstack_export.convert(subnets, ports, POOLS)
        self.assertEqual([], result.rows)
        reasons = {s: r for _router, s, r in result.skipped}
        self.assertIn("it has host bits set; did you mean 10.0.1.0/24?",
                      reasons["s1"])
        self.assertIn("it has no prefix length", reasons["s2"])
        e = self.assertRaises(errors.InvalidInputFile,
                              openstack_export.read_router_listing, subnets,
                              ports)
        self.assertIn("subnet s1 (item 1): its CIDR '10.0.1.5/24': it has "
                      "host bits set; did you mean 10.0.1.0/24?", str(e))

    def test_bad_files(self):
        ports = os.path.join(self.state_path, "ports")
        os.makedirs(ports)
        for content, reason in (("{", "not valid JSON"),
                                ('{"a": 1}', "expected the JSON list"),
                                ('[{"ID": "s"}]', "expected ID, Network")):
            e = self.assertRaises(errors.InvalidInputFile,
                                  openstack_export.convert,
                                  self.write("subnets.json", content),
                                  ports, POOLS)
            self.assertIn(reason, str(e))
        subnets = self.write("subnets.json", SUBNETS)
        self.write("ports/r.json", [{"ID": "p"}])
        e = self.assertRaises(errors.InvalidInputFile,
                              openstack_export.convert, subnets, ports, POOLS)
        self.assertIn("no 'Fixed IP Addresses'", str(e))
        e = self.assertRaises(errors.InvalidInputFile,
                              openstack_export.convert, subnets,
                              os.path.join(self.state_path, "nope"), POOLS)
        self.assertIn("cannot be listed", str(e))
