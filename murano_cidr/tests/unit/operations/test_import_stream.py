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

"""An import file read as a stream: the same rows, bounded memory."""

import contextlib
import io
import json
import os
import random
import tempfile

import fixtures
import netaddr

from murano_cidr.operator.cmd import allocations
from murano_cidr.operator.cmd import output
from murano_cidr.operator import errors
from murano_cidr.operator.operations import files
from murano_cidr.operator.operations import importing
from murano_cidr.operator.operations import json_stream
from murano_cidr.operator import overlaps
from murano_cidr.tests import base
from murano_cidr.tests.unit.operations import fakes
from murano_cidr.tests.unit.operations import test_importing

POOLS = test_importing.POOLS

#: Duplicates and overlaps far apart, invalid rows between them.
CSV = ("scope,cidr,owner\n" +
       "".join("r%d,10.0.%d.0/24,n%d\n" % (i % 3, i, i) for i in range(20)) +
       "r0,10.0.0.0/23,late-overlap\n"
       "r1,10.0.50.0/24,n0\n"
       "r1,nope,bad\n"
       ",10.0.1.0/24,no-scope\n"
       "r2,10.0.2.0/25,inside\n")


class _Stdin(object):
    """Standard input that is a pipe: no size, no seeking."""

    def __init__(self, data):
        self.buffer = io.BufferedReader(io.BytesIO(data))


class TestStream(test_importing.FileTestCase):

    def setUp(self):
        super().setUp()
        self.scratch = os.path.join(self.state_path, "tmp")
        os.mkdir(self.scratch)
        self.useFixture(fixtures.MonkeyPatch("tempfile.tempdir",
                                             self.scratch))

    def snapshot(self, rows):
        with rows:
            return [(r.where, r.status, r.shown(), r.reason) for r in rows]

    def test_small_parts_and_reads_give_the_same_rows(self):
        path = self.write("a.csv", CSV)
        whole = self.snapshot(importing.read_file(path, POOLS))
        # What the file read whole and its rows held in memory gave.
        self.assertEqual(
            [("line 2", importing.INVALID, ("n0", "10.0.0.0/24", "r0"),
              "10.0.0.0/24 overlaps 10.0.0.0/23 of owner late-overlap "
              "(line 22) in scope r0"),
             ("line 23", importing.INVALID, ("n0", "10.0.50.0/24", "r1"),
              "owner n0 appears again (first at line 2)"),
             ("line 24", importing.INVALID, ("bad", "nope", "r1"),
              "Invalid CIDR 'nope' in cidr: it has no prefix length"),
             ("line 26", importing.INVALID,
              ("inside", "10.0.2.0/25", "r2"),
              "10.0.2.0/25 overlaps 10.0.2.0/24 of owner n2 (line 4) in "
              "scope r2")],
            [r for r in whole if r[1] != importing.NEW])
        self.assertEqual(21, [r[1] for r in whole].count(importing.NEW))
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.operator.operations.import_rows.BATCH", 3))
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.operator.operations.files.READ_SIZE", 7))
        self.assertEqual(whole,
                         self.snapshot(importing.read_file(path, POOLS)))
        self.useFixture(fixtures.MonkeyPatch("sys.stdin",
                                             _Stdin(CSV.encode())))
        self.assertEqual(whole,
                         self.snapshot(importing.read_file("-", POOLS)))
        self.assertEqual([], os.listdir(self.scratch))

    def test_progress_counts_every_byte(self):
        path = self.write("a.csv", CSV)
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.operator.operations.importing.PROGRESS_EVERY", 4))
        counted = []
        importing.read_file(path, POOLS, progress=counted.append).close()
        self.assertGreater(len(counted), 2)
        self.assertEqual(len(CSV), sum(counted))

    def test_no_format_is_limited_but_a_single_json_value_is(self):
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.operator.operations.files.MAX_FILE_SIZE", 100))
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.operator.operations.json_stream.MAX_VALUE", 100))
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.operator.operations.json_stream.WINDOW", 16))
        records = [{"owner": "n%d" % i, "cidr": "10.0.%d.0/24" % i,
                    "scope": "r"} for i in range(10)]
        lines = "".join(json.dumps(r) + "\n" for r in records)
        for name, content, where in (
                ("a.csv", "scope,cidr,owner\n" + "".join(
                    "r,%(cidr)s,%(owner)s\n" % r for r in records),
                 "line 2"),
                ("a.json", json.dumps(records, indent=2), "item 1"),
                ("lines.json", lines, "line 1"),
                ("-", lines, "line 1")):
            if name == "-":
                self.useFixture(fixtures.MonkeyPatch(
                    "sys.stdin", _Stdin(content.encode())))
                rows = importing.read_file("-", POOLS)
            else:
                rows = importing.read_file(self.write(name, content), POOLS)
            with rows:
                self.assertEqual(where, rows[0].where, name)
                self.assertEqual(0, rows.count()[importing.INVALID], name)
        e = self.assertRaises(errors.InvalidInputFile, self.read,
                              "a.json", {"allocations": records})
        self.assertIn("holds a JSON value larger than 100 characters",
                      str(e))

    def test_what_list_and_convert_openstack_print_imports_back(self):
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.operator.operations.json_stream.WINDOW", 16))
        held = [fakes.allocation("n%d" % i, "10.0.%d.0/24" % i, "r")
                for i in range(5)]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            allocations.print_allocations(held, output.JSON)
        with self.read("list.json", out.getvalue()) as rows:
            self.assertEqual([a.to_dict() for a in held],
                             [r.allocation.to_dict() for r in rows])

    def test_a_json_list_is_read_item_by_item(self):
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.operator.operations.json_stream.WINDOW", 64))
        text = json.dumps([{"owner": "n%d" % i, "cidr": "10.0.%d.0/24" % i}
                           for i in range(200)], indent=2)
        stream = io.StringIO(text)
        items = json_stream.items("a.json", stream)
        self.assertEqual(("item 1", {"owner": "n0", "cidr": "10.0.0.0/24"}),
                         next(items))
        self.assertLess(stream.tell(), 4 * 64)
        self.assertEqual(json.loads(text)[1:], [v for _, v in items])

    def test_bad_text_late_in_the_file(self):
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.operator.operations.files.READ_SIZE", 16))
        for content, reason in (
                (CSV.encode() + b"r,10.0.9.0/24,\xff\n", "not UTF-8"),
                (CSV + 'r,"10.0.9.0/24"x,n\n', "line 27: is not valid CSV"),
                (CSV + "r,10.0.9.0/24,n,extra\n", "line 27: 4 cells")):
            e = self.assertRaises(errors.InvalidInputFile, self.read,
                                  "a.csv", content)
            self.assertIn(reason, str(e))
            # The rows read before the error are gone with their file.
            self.assertEqual([], os.listdir(self.scratch))

    def test_format_is_told_from_the_start_of_a_pipe(self):
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.operator.operations.files.HEAD", 2))
        data = b'  \n\n [{"owner": "n", "cidr": "10.0.1.0/24"}]'
        self.useFixture(fixtures.MonkeyPatch("sys.stdin", _Stdin(data)))
        with files.open_input("-") as opened:
            self.assertEqual("[", opened.first)
            self.assertIsNone(opened.size)
            self.assertEqual(data, opened.read())
        self.useFixture(fixtures.MonkeyPatch("sys.stdin", _Stdin(data)))
        with importing.read_file("-", POOLS) as rows:
            self.assertEqual(["item 1"], [r.where for r in rows])

    def test_rows_removes_its_file(self):
        rows = importing.Rows()
        self.assertEqual(1, len(os.listdir(self.scratch)))
        rows.close()
        rows.close()
        self.assertEqual([], os.listdir(self.scratch))
        self.assertIsNotNone(tempfile.gettempdir())


class TestOverlapsInOnePass(base.TestCase):
    """The pass over sorted rows finds what scope_overlaps finds."""

    def test_same_as_scope_overlaps(self):
        generator = random.Random(1502437)
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.operator.operations.import_rows.BATCH", 7))
        for _ in range(20):
            allocations = [fakes.allocation(
                "n%d" % i, "10.0.%d.0/%d" % (
                    generator.randrange(0, 8) * 4,
                    generator.choice((22, 23, 24))),
                generator.choice(("r1", "r2"))) for i in range(40)]
            # A /22 or /23 start must be aligned: keep the valid ones.
            allocations = [a for a in allocations
                           if netaddr.IPNetwork(a.cidr).cidr ==
                           netaddr.IPNetwork(a.cidr)]
            with importing.Rows() as rows:
                for n, a in enumerate(allocations, 1):
                    rows.add(importing.Row("item %d" % n, a))
                rows.check_duplicates()
                got = {r.where: r.reason for r in rows
                       if r.status == importing.INVALID}
            expected = {}
            for (n, a), (m, other) in overlaps.scope_overlaps(
                    enumerate(allocations, 1),
                    lambda item: (item[1].scope, 4,
                                  netaddr.IPNetwork(item[1].cidr).first,
                                  netaddr.IPNetwork(item[1].cidr).last)):
                expected["item %d" % n] = (
                    "%s overlaps %s of owner %s (item %d) in scope %s"
                    % (a.cidr, other.cidr, other.owner, m, a.scope))
            self.assertTrue(expected)
            self.assertEqual(expected, got)
