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

"""Reading, planning and applying an import file."""

import json
import os

from murano_cidr.engine import allocation as allocation_mod
from murano_cidr.engine import pool as pool_mod
from murano_cidr.operator import errors
from murano_cidr.operator.operations import importing
from murano_cidr.tests import base
from murano_cidr.tests.unit.operations import fakes

POOLS = {4: pool_mod.Pool.from_cidrs(["10.0.0.0/16"], 24),
         6: pool_mod.Pool.from_cidrs(["fd00::/48"], 64)}


class FileTestCase(base.TestCase):

    def write(self, name, content):
        path = os.path.join(self.state_path, name)
        if isinstance(content, bytes):
            with open(path, "wb") as f:
                f.write(content)
            return path
        with open(path, "w") as f:
            f.write(content if isinstance(content, str)
                    else json.dumps(content))
        return path

    def read(self, name, content, fmt=None):
        return importing.read_file(self.write(name, content), POOLS, fmt)


class TestReadFile(FileTestCase):

    def test_json_list(self):
        rows = self.read("a.json", [
            {"scope": "r1", "cidr": "10.0.1.0/24", "owner": "n1"},
            {"router_id": "r1", "cidr": "fd00:0:0:1::/64",
             "network_id": "n2", "ip_version": 6},
            {"cidr": "10.0.1.0/24", "owner": "n3"}])
        self.assertEqual([importing.NEW] * 3, [r.status for r in rows])
        self.assertEqual(
            [allocation_mod.Allocation("n1", "10.0.1.0/24", "r1", 4),
             allocation_mod.Allocation("n2", "fd00:0:0:1::/64", "r1", 6),
             allocation_mod.Allocation("n3", "10.0.1.0/24", None, 4)],
            [r.allocation for r in rows])
        self.assertEqual(["item 1", "item 2", "item 3"],
                         [r.where for r in rows])

    def test_list_output_is_accepted(self):
        a = fakes.allocation("n1", "10.0.2.0/24", "r1")
        rows = self.read("a.json", {"allocations": [a.to_dict()]})
        self.assertEqual(a.cidr, rows[0].allocation.cidr)
        self.assertEqual(importing.NEW, rows[0].status)

    def test_csv_with_header_in_any_order(self):
        rows = self.read("a.csv", "# exported\nowner, CIDR ,router\n"
                         "n1,10.0.1.0/24,r1\n\n\"n2\",10.0.2.0/24,\n")
        self.assertEqual(
            [("line 3", "n1", "10.0.1.0/24", "r1"),
             ("line 5", "n2", "10.0.2.0/24", None)],
            [(r.where, r.allocation.owner, r.allocation.cidr,
              r.allocation.scope) for r in rows])

    def test_format_is_sniffed_and_can_be_forced(self):
        rows = self.read("noext", '[{"cidr": "10.0.1.0/24", "owner": "n"}]')
        self.assertEqual("item 1", rows[0].where)
        rows = self.read("noext", "cidr,owner\n10.0.1.0/24,n\n")
        self.assertEqual("line 2", rows[0].where)
        self.assertRaises(errors.InvalidInputFile, self.read, "x.csv",
                          "cidr,owner\n10.0.1.0/24,n\n", fmt="json")

    def assertInvalidRow(self, record, reason):
        rows = self.read("a.json", [record])
        self.assertEqual(importing.INVALID, rows[0].status)
        self.assertIn(reason, rows[0].reason)

    def test_integer_ids_are_their_strings(self):
        rows = self.read("a.json", [{"owner": 7, "scope": 42,
                                     "cidr": "10.0.1.0/24"}])
        self.assertEqual(importing.NEW, rows[0].status, rows[0].reason)
        self.assertEqual(("7", "42"), (rows[0].allocation.owner,
                                       rows[0].allocation.scope))

    def test_invalid_rows(self):
        self.assertInvalidRow({"cidr": "10.0.1.0/24"}, "missing owner")
        self.assertInvalidRow({"owner": "n", "scope": "r"}, "missing cidr")
        self.assertInvalidRow({"owner": "n", "cidr": "10.0.1.0/33"},
                              "not an IPv4 or IPv6 network in CIDR notation")
        self.assertInvalidRow({"owner": "n", "cidr": "banana/24"},
                              "not an IPv4 or IPv6 network in CIDR notation")
        self.assertInvalidRow({"owner": "n", "cidr": "10.0.1.0"},
                              "no prefix length")
        self.assertInvalidRow({"owner": "n", "cidr": "10.0.1.7/24"},
                              "did you mean 10.0.1.0/24")
        self.assertInvalidRow({"owner": "n", "cidr": "192.168.0.0/24"},
                              "outside every configured pool")
        self.assertInvalidRow({"owner": "n", "cidr": "10.0.0.0/8"},
                              "outside every configured pool")
        self.assertInvalidRow({"owner": "n", "cidr": 42}, "must be a string")
        self.assertInvalidRow({"owner": "", "cidr": "10.0.1.0/24"},
                              "missing owner")
        self.assertInvalidRow({"owner": 7.5, "cidr": "10.0.1.0/24"},
                              "must be a string")
        self.assertInvalidRow({"owner": "n", "cidr": "10.0.1.0/24",
                               "ip_version": 6}, "ip_version says 6")
        self.assertInvalidRow({"owner": "n", "cidr": "10.0.1.0/24",
                               "ip_version": "four"}, "must be 4 or 6")
        self.assertInvalidRow({"owner": "n", "cidr": "10.0.1.0/24",
                               "scop": "r"}, "unknown field 'scop'")
        self.assertInvalidRow({"owner": "n", "cidr": "10.0.1.0/24",
                               "router": "r", "scope": "r"}, "given twice")
        self.assertInvalidRow("10.0.1.0/24", "expected an object")

    def test_ipv6_without_a_pool_is_outside(self):
        path = self.write("a.json", [{"owner": "n", "cidr": "fd00::/64"}])
        rows = importing.read_file(path, {4: POOLS[4]})
        self.assertIn("outside every configured pool", rows[0].reason)

    def test_duplicate_owner(self):
        rows = self.read("a.csv", "scope,cidr,owner\nr,10.0.1.0/24,n\n"
                         "r2,10.0.2.0/24,n\n")
        self.assertEqual([importing.NEW, importing.INVALID],
                         [r.status for r in rows])
        self.assertIn("owner n appears again (first at line 2)",
                      rows[1].reason)

    def test_overlap_within_a_scope(self):
        rows = self.read("a.csv", "scope,cidr,owner\n"
                         "r,10.0.0.0/23,a\n"
                         "r,10.0.1.0/24,b\n"
                         "r2,10.0.1.0/24,c\n"
                         ",10.0.1.0/24,d\n"
                         "r,10.0.2.0/24,e\n")
        self.assertEqual(
            [importing.NEW, importing.INVALID, importing.NEW, importing.NEW,
             importing.NEW], [r.status for r in rows])
        self.assertIn("overlaps 10.0.0.0/23 of owner a (line 2)",
                      rows[1].reason)

    def assertBadFile(self, name, content, reason):
        e = self.assertRaises(errors.InvalidInputFile, self.read, name,
                              content)
        self.assertIn(reason, str(e))
        self.assertIn(name, str(e))

    def test_bad_files(self):
        self.assertBadFile("a.json", '[{"owner": "n",', "is not valid JSON")
        self.assertBadFile("a.json", '[{"owner": "n",\n  x]',
                           "line 2 column 3")
        self.assertBadFile("a.json", '{"owner": "n"}\n{"owner": "m",\n x}',
                           "line 3 column 2")
        self.assertBadFile("a.json", '{"allocations": {}}',
                           "expected a JSON list")
        self.assertBadFile("a.json", '[{"owner": "n"}] []', "Extra data")
        self.assertBadFile("a.json", '[]', "holds no allocation")
        self.assertBadFile("a.csv", '', "has no header row")
        self.assertBadFile("a.csv", 'cidr,owner\n', "holds no allocation")
        self.assertBadFile("a.csv", 'cidr,owner\n"10.0.1.0/24"x,n\n',
                           "line 2: is not valid CSV")
        self.assertBadFile("a.csv", 'cidr,cidr\n1,2\n', "name each column")
        self.assertBadFile("a.csv", 'cidr,owner\n10.0.1.0/24,n,extra\n',
                           "line 2: 3 cells")
        self.assertBadFile("a.csv", b"cidr,owner\n\xff\xfe\n",
                           "not UTF-8")
        e = self.assertRaises(errors.InvalidInputFile,
                              importing.read_file,
                              os.path.join(self.state_path, "missing.json"),
                              POOLS)
        self.assertIn("cannot be read", str(e))
        e = self.assertRaises(errors.InvalidInputFile,
                              importing.read_file, self.state_path, POOLS)
        self.assertIn("is a directory", str(e))


class TestPlanAndApply(base.TestCase):

    def setUp(self):
        super().setUp()
        self.config(pool_cidrs=["10.0.0.0/16"], subnet_prefixlen=24)
        self.existing = [fakes.allocation("held", "10.0.1.0/24", "r"),
                         fakes.allocation("wide", "10.0.8.0/22", "r"),
                         fakes.allocation("other", "10.0.5.0/24", "r2")]
        self.driver = fakes.FakeStatefulDriver(self.conf, self.existing)

    def rows(self, *allocations):
        rows = importing.Rows()
        self.addCleanup(rows.close)
        for i, a in enumerate(allocations, 1):
            rows.add(importing.Row("item %d" % i, a))
        return rows

    def test_plan(self):
        rows = importing.plan(self.rows(
            fakes.allocation("held", "10.0.1.0/24", "r"),
            fakes.allocation("held", "10.0.2.0/24", "r"),
            fakes.allocation("new1", "10.0.1.0/24", "r"),
            fakes.allocation("new2", "10.0.9.0/24", "r"),
            fakes.allocation("new3", "10.0.0.0/20", "r2"),
            fakes.allocation("new4", "10.0.1.0/24", "r2"),
            fakes.allocation("new5", "10.0.1.0/24", None),
            fakes.allocation("new6", "10.0.12.0/24", "r")),
            # Read once, as the db driver's pages are.
            iter(self.driver.list()))
        self.assertEqual(
            [importing.PRESENT, importing.CONFLICT, importing.CONFLICT,
             importing.CONFLICT, importing.CONFLICT, importing.NEW,
             importing.NEW, importing.NEW], [r.status for r in rows])
        self.assertIn("owner held already holds 10.0.1.0/24 in scope r",
                      rows[1].reason)
        self.assertIn("overlaps 10.0.1.0/24 held by owner held in scope r",
                      rows[2].reason)
        self.assertIn("overlaps 10.0.8.0/22 held by owner wide",
                      rows[3].reason)
        self.assertIn("owner other", rows[4].reason)

    def test_apply_is_all_or_nothing_in_one_call(self):
        rows = importing.plan(self.rows(
            fakes.allocation("held", "10.0.1.0/24", "r"),
            fakes.allocation("a", "10.0.2.0/24", "r"),
            fakes.allocation("b", "10.0.3.0/24", "r")), self.driver.list())
        importing.apply(self.driver, rows)
        self.assertEqual(1, self.driver.import_calls)
        self.assertEqual([importing.PRESENT, importing.IMPORTED,
                          importing.IMPORTED], [r.status for r in rows])
        self.assertEqual("10.0.3.0/24", self.driver.get("b").cidr)
        self.assertEqual({importing.NEW: 0, importing.PRESENT: 1,
                          importing.INVALID: 0, importing.CONFLICT: 0,
                          importing.IMPORTED: 2}, importing.count(rows))

    def test_apply_propagates_a_race_and_writes_nothing(self):
        rows = importing.plan(self.rows(
            fakes.allocation("a", "10.0.2.0/24", "r"),
            fakes.allocation("b", "10.0.3.0/24", "r")), self.driver.list())
        self.driver.allocations["racer"] = fakes.allocation(
            "racer", "10.0.3.0/24", "r")
        self.assertRaises(errors.AllocationConflict, importing.apply,
                          self.driver, rows)
        self.assertIsNone(self.driver.get("a"))

    def test_continue_on_error_records_what_it_can(self):
        rows = importing.plan(self.rows(
            fakes.allocation("a", "10.0.2.0/24", "r"),
            fakes.allocation("b", "10.0.3.0/24", "r")), self.driver.list())
        self.driver.allocations["racer"] = fakes.allocation(
            "racer", "10.0.3.0/24", "r")
        importing.apply(self.driver, rows, continue_on_error=True)
        self.assertEqual([importing.IMPORTED, importing.CONFLICT],
                         [r.status for r in rows])
        self.assertIn("held by owner racer", rows[1].reason)
        self.assertEqual("10.0.2.0/24", self.driver.get("a").cidr)
        self.assertIsNone(self.driver.get("b"))

    def test_nothing_new_calls_nothing(self):
        rows = importing.plan(self.rows(
            fakes.allocation("held", "10.0.1.0/24", "r")), self.driver.list())
        importing.apply(self.driver, rows)
        self.assertEqual(0, self.driver.import_calls)
