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

"""Driver benchmarks: collision counting, backends, settings, report."""

import json
import random

import fixtures

from murano_cidr.engine import allocator
from murano_cidr.engine.drivers.db import options as db_options
from murano_cidr import exceptions
from murano_cidr.measuring.bench import backends
from murano_cidr.measuring.bench import drivers
from murano_cidr.measuring.bench import fillcost
from murano_cidr.measuring.bench import report
from murano_cidr.measuring.bench import runner
from murano_cidr.operator.cmd import cli
from murano_cidr import opts
from murano_cidr.tests import base
from murano_cidr.tests import round_trips


class TestCountCollisions(base.TestCase):

    def test_distinct(self):
        self.assertEqual(0, drivers.count_collisions(
            ["10.0.0.0/24", "10.0.1.0/24", "10.0.2.0/24"]))
        self.assertEqual(0, drivers.count_collisions([]))

    def test_duplicates(self):
        self.assertEqual(2, drivers.count_collisions(
            ["10.0.1.0/24", "10.0.0.0/24", "10.0.1.0/24", "10.0.1.0/24"]))

    def test_containment(self):
        self.assertEqual(2, drivers.count_collisions(
            ["10.0.0.0/23", "10.0.1.0/24", "10.0.0.0/24", "10.0.2.0/24"]))


class TestBackends(base.TestCase):

    def test_every_name(self):
        known = backends.backends()
        self.assertEqual(set(backends.NAMES), set(known))
        self.assertEqual("sql", known["db-mysql"].kind)
        self.assertEqual("tooz", known["lock-redis"].kind)
        self.assertEqual("file-lock", known["lock-file"].kind)
        self.assertEqual("none", known["random"].kind)

    def test_groups(self):
        b = backends.backends(redis_url="redis://h:1")["lock-redis"]
        groups = b.groups({"max_environments": 64}, "/tmp/s")
        self.assertEqual({"driver": "lock", "state_path": "/tmp/s",
                          "max_environments": 64,
                          "coordination_url": "redis://h:1"},
                         groups["cidr_allocator"])

    def test_unreachable_services_say_so(self):
        # Port 1 on the loopback: refused at once.
        known = backends.backends(
            mysql_url="mysql+pymysql://u:secret@127.0.0.1:1/db",
            redis_url="redis://127.0.0.1:1")
        reason = known["db-mysql"].probe()
        self.assertIn("127.0.0.1:1", reason)
        self.assertIn("unreachable", reason)
        self.assertNotIn("secret", reason)
        self.assertIn("unreachable", known["lock-redis"].probe())
        self.assertIsNone(known["random"].probe())


class TestSettings(base.TestCase):

    def test_valid(self):
        settings = runner.Settings(backends=["random", "db-sqlite"])
        settings.validate()
        self.assertEqual(2 + 5, settings.steps)
        self.assertEqual(
            2, runner.Settings(backends=["random", "legacy"],
                               pool_math=False).steps)

    def test_invalid(self):
        e = self.assertRaises(exceptions.InvalidArgument,
                              runner.Settings(backends=["nope"]).validate)
        self.assertIn("lock-redis", str(e))
        self.assertRaises(exceptions.InvalidArgument,
                          runner.Settings(backends=[], workers=0).validate)

    def test_absurd_sizes_are_refused(self):
        # Issue 32: --allocations 1000000000000 ran without end.
        e = self.assertRaises(exceptions.InvalidArgument, runner.Settings(
            backends=[], allocations=10 ** 12).validate)
        self.assertIn("must be between 1 and 4096", str(e))
        e = self.assertRaises(exceptions.InvalidArgument, runner.Settings(
            backends=[], workers=8, allocations=1000).validate)
        self.assertIn("'8 x 1000': more than the 4096 subnets of the "
                      "benchmark's pool", str(e))
        runner.Settings(backends=[], workers=4, allocations=1024).validate()

    def test_the_maximum_is_documented_and_refused_in_one_line(self):
        out = self.useFixture(fixtures.StringStream("stdout")).stream
        self.useFixture(fixtures.MonkeyPatch("sys.stdout", out))
        e = self.assertRaises(SystemExit, cli.main, ["bench", "--help"])
        self.assertEqual(0, e.code)
        out.seek(0)
        self.assertIn("allocations per worker (default 100, at most 4096; "
                      "W x N at most the pool's 4096 subnets)",
                      " ".join(out.read().split()))
        run = self.useFixture(fixtures.MockPatch(
            "murano_cidr.measuring.bench.runner.run")).mock
        code, out, err = self.run_main(cli.main, "bench", "--quiet",
                                       "--allocations", "1000000000000")
        self.assertEqual((2, ""), (code, out))
        self.assertEqual(["murano-cidr: error: Invalid allocations "
                          "1000000000000: must be between 1 and 4096"],
                         err.splitlines())
        run.assert_not_called()


class TestExitCode(base.TestCase):
    """A failed target fails the command (issue 32: it exited 0)."""

    def _bench(self, targets):
        doc = {"targets": targets}
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.measuring.bench.runner.run", return_value=doc))
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.measuring.bench.report.render", return_value="R"))
        return self.run_main(cli.main, "bench", "--quiet",
                             "--pool-math-only")

    def test_a_failed_target_exits_1_and_names_it(self):
        code, out, err = self._bench([
            {"name": "a", "passed": True}, {"name": "b", "passed": False}])
        self.assertEqual((1, "R\n"), (code, out))
        self.assertEqual("murano-cidr bench: error: 1 of 2 targets failed: "
                         "b\n",
                         err)

    def test_every_target_passed_exits_0(self):
        self.assertEqual((0, "R\n", ""),
                         self._bench([{"name": "a", "passed": True}]))


def _cost(layout, fill, p50, p90, rows=1.0, statements=2.0,
          engines="turns"):
    return {"engines": engines, "layout": layout, "fill": fill,
            "samples": 10, "p50": p50,
            "p90": p90, "p99": p90, "rows": rows, "statements": statements,
            "baseline": None, "baseline_p90": None}


def doc():
    ok = drivers.DriverResult("db-sqlite", "db", workers=2, allocations=100,
                              seconds=2.0, p50=0.004, p99=0.05,
                              baseline_what="INSERT transaction",
                              baseline=0.002,
                              fill_cost=[_cost("packed", "90%", 0.004,
                                               0.006)])
    skipped = drivers.DriverResult("db-mysql", "db",
                                   skipped="db is unreachable")
    return {"settings": runner.Settings(backends=["db-sqlite"]).__dict__,
            "machine": {}, "drivers": [ok.to_dict(), skipped.to_dict()],
            "pool_math": [{"name": "parse-60k", "candidates": 65536,
                           "taken": 60000, "seconds": 0.3, "what": "x"}],
            "targets": [{"name": "a", "ratio": 1.2, "limit": 2.0,
                         "at_most": True, "detail": "d", "passed": True},
                        {"name": "b", "ratio": 90.0, "limit": 1000.0,
                         "at_most": False, "detail": "d",
                         "passed": False}]}


class TestReport(base.TestCase):

    def test_table(self):
        text = report.table(doc())
        # The main row comes first.
        self.assertTrue(text.startswith("Main row: engines taking turns"))
        self.assertIn("db-sqlite    turns  packed   90%", text)
        self.assertIn("db-sqlite", text)
        self.assertIn("50", text)   # allocations per second
        self.assertIn("2.0x", text)  # p50 over the baseline
        self.assertIn("db-mysql: skipped: db is unreachable", text)
        self.assertIn("65,536", text)
        self.assertIn("PASS  a: 1.20x (at most 2x; d)", text)
        self.assertIn("FAIL  b: 90.00x (at least 1000x; d)", text)

    def test_csv_names_the_way(self):
        names = [r["metric"] for r in report.rows(doc())
                 if r["section"] == "fill"]
        self.assertIn("turns packed 90% p50", names)

    def test_json(self):
        parsed = json.loads(report.render(doc(), "json"))
        self.assertEqual(50.0, parsed["drivers"][0]["throughput"])
        self.assertAlmostEqual(2.0, parsed["drivers"][0]["p50_over_baseline"])
        self.assertFalse(parsed["targets"][1]["passed"])


class TestDbTargets(base.TestCase):

    def _result(self, driver="db"):
        result = drivers.DriverResult("db-postgresql", driver)
        result.baseline = 0.001
        result.fill_cost = [_cost("packed", "1%", 0.0025, 0.0040),
                            _cost("random", "90%", 0.0035, 0.0080,
                                  engines="alone")]
        return result

    def test_p50_against_the_insert_and_p90_against_p50(self):
        targets = fillcost.db_targets(self._result())
        for expected, target in zip([2.5, 4.0 / 2.5, 3.5, 8.0 / 3.5],
                                    targets):
            self.assertAlmostEqual(expected, target.ratio)
        self.assertEqual([True, True, False, False],
                         [t.passed for t in targets])
        self.assertEqual([3.0, 2.0, 3.0, 2.0], [t.limit for t in targets])
        self.assertIn("db-postgresql: turns, packed 1% full: p50",
                      targets[0].name)
        self.assertIn("db-postgresql: alone, random 90% full: p90 vs p50",
                      targets[3].name)

    def test_only_for_measured_db_backends(self):
        self.assertEqual([], fillcost.db_targets(self._result("lock")))
        skipped = self._result()
        skipped.skipped = "PostgreSQL is unreachable"
        self.assertEqual([], fillcost.db_targets(skipped))


class TestFillCost(base.TestCase):

    def measure(self, driver, baseline=None):
        db = self.use_database("sqlite", self.config_fixture, sync=True)
        self.assertIsNotNone(db.url)
        groups = {opts.GROUP: {
            "driver": driver, "pool_cidrs": ["10.0.0.0/18"],
            "subnet_prefixlen": 24,
            "state_path": self.useFixture(fixtures.TempDir()).path},
            db_options.GROUP: {"connection": db.url}}
        return fillcost.measure(groups, samples=3, baseline=baseline)

    def test_engines_taking_turns_then_alone(self):
        calls = []
        costs = self.measure("db", baseline=lambda: calls.append(1))
        # Timed after every allocation, the untimed first one's dropped.
        self.assertEqual(12 * 4, len(calls))
        self.assertEqual([(way, layout, fill)
                          for way in ("turns", "alone")
                          for layout in ("packed", "random")
                          for fill in ("1%", "50%", "90%")],
                         [(c.engines, c.layout, c.fill) for c in costs])
        for cost in costs:
            self.assertEqual(3, cost.samples)
            self.assertLessEqual(cost.p50, cost.p90)
            self.assertLessEqual(cost.baseline, cost.baseline_p90)
        # The lock and the checked insert; another engine between may
        # have taken the candidate drawn, which costs a window read and a
        # second insert (no ping: SQLite's writers keep their connection).
        allocate = round_trips.ALLOCATE["sqlite"]
        self.assertEqual({(0.0, len(allocate))},
                         {(c.rows, c.statements) for c in costs[6:]})
        for cost in costs[:6]:
            self.assertGreaterEqual(cost.statements, len(allocate))

    def test_the_fill_stays_and_nothing_is_left(self):
        self.measure("db")
        driver = allocator.get_allocator(self.conf)
        self.addCleanup(driver.close)
        # Every timed and neighbouring allocation was released and freed,
        # every scope's fill released.
        self.assertEqual([], driver.list())
        self.assertEqual([], driver.list_released())

    def test_stateless_drivers_have_no_rows_or_statements(self):
        costs = self.measure("random")
        self.assertEqual(6, len(costs))
        self.assertEqual({"alone"}, {c.engines for c in costs})
        self.assertEqual({None}, {c.rows for c in costs}
                         | {c.statements for c in costs})

    def test_layouts(self):
        rng = random.Random(1)
        self.assertEqual([0, 1, 2], fillcost.used_indices("packed", 10, 3,
                                                          rng))
        picked = fillcost.used_indices("random", 10, 3, rng)
        self.assertEqual(3, len(set(picked)))
        self.assertLessEqual(set(picked), set(range(10)))
