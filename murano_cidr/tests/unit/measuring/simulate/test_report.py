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

"""Simulation results as a table, JSON and CSV."""

import csv
import io
import json

from murano_cidr.measuring.simulate import model
from murano_cidr.measuring.simulate import report
from murano_cidr.tests import base


def results():
    return [
        model.Result("legacy", 2, 2000, 32, 0, collided=62, refused=62),
        model.Result("legacy", 10, 2000, 32, 0, collided=1584,
                     refused=4000),
        model.Result("db", 10, 100, 32, 16, errors=1,
                     first_error="PoolExhausted: no free /24"),
    ]


class TestReport(base.TestCase):

    def test_table(self):
        text = report.table(results())
        lines = text.splitlines()
        self.assertIn("P(COLLISION)", lines[0])
        self.assertIn("BIRTHDAY BOUND", lines[0])
        self.assertTrue(lines[1].startswith("legacy"))
        # 62/2000, its Wilson interval and the bound over 32 slots.
        self.assertIn("3.1%", lines[1])
        self.assertIn("2.4% - 4.0%", lines[1])
        self.assertIn("79.2%", lines[2])
        self.assertIn("16/32", lines[3])
        self.assertIn("db, K=10: 1 trial(s) failed; first error: "
                      "PoolExhausted", text)

    def test_table_without_completed_trials(self):
        failed = model.Result("lock", 2, 5, 32, 0, errors=5,
                              first_error="LockUnavailable: down")
        row = report.table([failed]).splitlines()[1].split()
        self.assertEqual(["lock", "2", "5", "32/32", "0", "n/a", "n/a",
                          "3.1%", "5"], row)
        doc = json.loads(report.to_json([failed]))["results"][0]
        self.assertEqual((0, None, None),
                         (doc["completed"], doc["probability"],
                          doc["ci95_low"]))

    def test_json(self):
        spec = model.Spec(drivers=["legacy"], ks=[2, 10], trials=2000,
                          pool={"max_environments": 20}, seed=7)
        doc = json.loads(report.render(results(), "json", spec))
        first = doc["results"][0]
        self.assertEqual("legacy", first["driver"])
        self.assertEqual(62, first["collided"])
        self.assertAlmostEqual(0.031, first["probability"])
        self.assertAlmostEqual(1 / 32, first["birthday_bound"])
        self.assertLess(first["ci95_low"], first["probability"])
        self.assertEqual(20, doc["spec"]["pool"]["max_environments"])
        self.assertEqual(7, doc["spec"]["seed"])

    def test_csv(self):
        rows = list(csv.DictReader(io.StringIO(
            report.render(results(), "csv"))))
        self.assertEqual(3, len(rows))
        self.assertEqual(list(report.CSV_FIELDS), list(rows[0]))
        self.assertEqual("1584", rows[1]["collided"])
        self.assertEqual("16", rows[2]["free"])
