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

"""Planning and applying a prune."""

import datetime
import os

from murano_cidr import exceptions
from murano_cidr.operator import errors
from murano_cidr.operator.operations import pruning
from murano_cidr.tests import base
from murano_cidr.tests.unit.operations import fakes

NOW = datetime.datetime(2026, 1, 10, 12, 0, tzinfo=datetime.timezone.utc)
HOUR = datetime.timedelta(hours=1)


class TestDurations(base.TestCase):

    def test_parse(self):
        self.assertEqual(
            [datetime.timedelta(seconds=3600), datetime.timedelta(minutes=90),
             datetime.timedelta(hours=24), datetime.timedelta(days=7),
             datetime.timedelta(weeks=2), datetime.timedelta(0)],
            [pruning.parse_duration(t)
             for t in ("3600", "90m", "24H", " 7d ", "2w", "0s")])

    def test_parse_rejects(self):
        for text in ("", "-1h", "1.5h", "h", "1y", "1 h 2m", None):
            self.assertRaises(exceptions.InvalidArgument,
                              pruning.parse_duration, text)

    def test_format(self):
        self.assertEqual(
            ["0s", "59s", "1m", "1h30m", "2d3h", "1d"],
            [pruning.format_duration(datetime.timedelta(seconds=s))
             for s in (0, 59, 60, 5400, 2 * 86400 + 3 * 3600 + 61, 86400)])


class TestLiveOwners(base.TestCase):

    def read(self, name, content, fmt=None):
        path = os.path.join(self.state_path, name)
        with open(path, "w") as f:
            f.write(content)
        return pruning.read_live_owners(path, fmt)

    def test_formats(self):
        expected = frozenset(["n1", "n2"])
        self.assertEqual(expected, self.read("a.json", '["n1", "n2"]'))
        self.assertEqual(expected, self.read(
            "a.json", '[{"ID": "n1", "Name": "x"}, {"id": "n2"}]'))
        self.assertEqual(expected, self.read(
            "a.json", '{"networks": [{"id": "n1"}, {"id": "n2"}]}'))
        self.assertEqual(expected, self.read("a.txt", "# live\nn1\n\n n2 \n"))
        self.assertEqual(expected, self.read("a", "n1\nn2\n"))
        self.assertEqual(expected, self.read(
            "a.csv", '"ID","Name"\n"n1","a"\n"n2","b"\n'))
        self.assertEqual(expected, self.read("a", "ID\nn1\nn2\n", "csv"))

    def test_integer_ids_are_their_strings(self):
        self.assertEqual(frozenset(["7", "n1"]),
                         self.read("a.json", '[7, {"id": "n1"}]'))

    def test_refuses_an_empty_file(self):
        for name, content in (("a.json", "[]"), ("a.txt", "# nothing\n"),
                              ("a.csv", "id\n")):
            e = self.assertRaises(errors.InvalidInputFile, self.read,
                                  name, content)
            self.assertIn("would release every allocation", str(e))

    def test_bad_files(self):
        for name, content, reason in (
                ("a.json", "[1, 2", "not valid JSON"),
                ("a.json", '"n1"', "expected a JSON list"),
                ("a.json", '[{"name": "x"}]', "item 1: Invalid owner None"),
                ("a.json", '["n1", 7.5]', "item 2"),
                ("a.csv", "name\nx\n", "no 'id' column"),
                ("a.txt", "n1\nbad\x07id\n", "line 2")):
            e = self.assertRaises(errors.InvalidInputFile, self.read,
                                  name, content)
            self.assertIn(reason, str(e))


class TestPlan(base.TestCase):

    def test_decisions(self):
        allocations = [
            fakes.allocation("live-old", "10.0.1.0/24", "r", 48 * HOUR, NOW),
            fakes.allocation("gone-old", "10.0.2.0/24", "r", 25 * HOUR, NOW),
            fakes.allocation("gone-new", "10.0.3.0/24", "r", 23 * HOUR, NOW),
            fakes.allocation("gone-unknown", "10.0.4.0/24", "r"),
            fakes.allocation("gone-edge", "10.0.5.0/24", "r", 24 * HOUR,
                             NOW)]
        decisions = pruning.plan(allocations, {"live-old"},
                                 grace=24 * HOUR, now=NOW)
        self.assertEqual(
            [pruning.KEEP, pruning.RELEASE, pruning.KEEP, pruning.KEEP,
             pruning.RELEASE], [d.action for d in decisions])
        self.assertEqual("owner is live", decisions[0].reason)
        self.assertEqual("owner not live; allocated 1d1h ago",
                         decisions[1].reason)
        self.assertIn("allocated 23h ago, within the grace period of 1d",
                      decisions[2].reason)
        self.assertIn("does not record when", decisions[3].reason)

    def test_naive_timestamps_are_utc(self):
        created = (NOW - 2 * HOUR).replace(tzinfo=None)
        a = fakes.allocation("gone", "10.0.1.0/24", "r")
        a = type(a)(a.owner, a.cidr, a.scope, created_at=created)
        self.assertEqual(
            [pruning.RELEASE],
            [d.action for d in pruning.plan([a], {"x"}, HOUR, NOW)])
        self.assertEqual(
            [pruning.KEEP],
            [d.action for d in pruning.plan([a], {"x"}, 3 * HOUR, NOW)])

    def test_negative_grace_is_refused(self):
        self.assertRaises(exceptions.InvalidArgument, pruning.plan, [],
                          {"x"}, -HOUR)


class TestApply(base.TestCase):

    def setUp(self):
        super().setUp()
        self.config(pool_cidrs=["10.0.0.0/16"], subnet_prefixlen=24)
        self.driver = fakes.FakeStatefulDriver(self.conf, [
            fakes.allocation("live", "10.0.1.0/24", "r", 48 * HOUR),
            fakes.allocation("gone", "10.0.2.0/24", "r", 48 * HOUR),
            fakes.allocation("young", "10.0.3.0/24", "r", HOUR),
            fakes.allocation("moved", "10.0.4.0/24", "r", 48 * HOUR)])

    def test_releases_only_what_the_plan_says(self):
        decisions = pruning.plan(self.driver.list(), {"live"})
        # "moved" is released and allocated again after the plan was made.
        self.driver.allocations["moved"] = fakes.allocation(
            "moved", "10.0.9.0/24", "r", HOUR)
        pruning.apply(self.driver, decisions)
        self.assertEqual(
            {"live": pruning.KEEP, "gone": pruning.RELEASED,
             "young": pruning.KEEP, "moved": pruning.SKIPPED},
            {d.allocation.owner: d.action for d in decisions})
        self.assertEqual(["live", "young", "moved"],
                         [a.owner for a in self.driver.list()])

    def test_share(self):
        decisions = pruning.plan(self.driver.list(), {"live"}, grace=HOUR / 2)
        self.assertEqual(3, sum(d.action == pruning.RELEASE
                                for d in decisions))
        e = self.assertRaises(exceptions.InvalidArgument,
                              pruning.check_share, decisions, 74)
        self.assertIn("would release 75%", str(e))
        self.assertIn("--max-release 76", str(e))
        pruning.check_share(decisions, 75)
        pruning.check_share([], 0)
