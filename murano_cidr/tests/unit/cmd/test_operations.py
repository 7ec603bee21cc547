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

"""The ``murano-cidr`` commands against an in-memory driver that keeps state.

The commands run in-process through :func:`murano_cidr.operator.cmd.cli.main`;
the functional tests run them in subprocesses against real databases.
"""

import datetime
import io
import json
import os

import fixtures
import sqlalchemy as sa

from murano_cidr.engine import allocator
from murano_cidr.engine.drivers import random as random_driver
from murano_cidr.operator.cmd import cli
from murano_cidr.operator.cmd import common
from murano_cidr.tests import base
from murano_cidr.tests import murano_db as murano_tables
from murano_cidr.tests.unit.operations import fakes

DAY = datetime.timedelta(days=1)


_REAL_GET_ALLOCATOR = allocator.get_allocator


class _Terminal(io.StringIO):
    """Standard error on a terminal."""

    def isatty(self):
        return True


class CommandTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.conf_file = os.path.join(self.state_path, "murano-cidr.conf")
        with open(self.conf_file, "w") as f:
            f.write("[cidr_allocator]\npool_cidrs = 10.0.0.0/22\n"
                    "subnet_prefixlen = 24\n")
        self.config(pool_cidrs=["10.0.0.0/22"], subnet_prefixlen=24)
        self.driver = fakes.FakeStatefulDriver(self.conf, [
            fakes.allocation("held", "10.0.0.0/24", "r", 2 * DAY),
            fakes.allocation("gone", "10.0.1.0/24", "r", 2 * DAY),
            fakes.allocation("young", "10.0.2.0/24", "r2",
                             datetime.timedelta(hours=1))])
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.engine.allocator.get_allocator",
            side_effect=lambda conf, require=(), action=None: (
                self.driver.require(require, action) or self.driver)))

    def use_stateless_driver(self):
        """Load the real random driver instead of the stateful fake."""
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.engine.allocator.get_allocator",
            side_effect=_REAL_GET_ALLOCATOR))
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.engine.allocator.driver_class",
            return_value=random_driver.RandomDriver))

    def write(self, name, content):
        path = os.path.join(self.state_path, name)
        with open(path, "w") as f:
            f.write(content)
        return path

    def run_cli(self, *args):
        return self.run_main(cli.main, "--config-file", self.conf_file, *args)

    def assertSucceeded(self, code, err):
        # Logs (INFO) go to stderr; errors and tracebacks must not.
        self.assertEqual(0, code, err)
        self.assertNotIn("error", err)
        self.assertNotIn("Traceback", err)

    def owners(self):
        return sorted(a.owner for a in self.driver.list())


class TestAllocationCommands(CommandTestCase):

    def test_allocate_confirm_show_release_in_json(self):
        code, out, err = self.run_cli("allocate", "n1", "--scope", "r",
                                      "--format", "json")
        self.assertSucceeded(code, err)
        self.assertEqual({"owner": "n1", "cidr": "10.0.2.0/24",
                          "scope": "r", "ip_version": 4}, json.loads(out))
        self.assertEqual((0, "confirmed n1\n", ""),
                         self.run_cli("confirm", "n1"))
        code, out, _ = self.run_cli("show", "n1", "--format", "json")
        shown = json.loads(out)
        self.assertEqual(("10.0.2.0/24", True),
                         (shown["cidr"], shown["confirmed"]))
        code, out, _ = self.run_cli("release", "n1", "--format", "json")
        self.assertEqual({"owner": "n1", "released": True}, json.loads(out))
        code, out, err = self.run_cli("show", "n1")
        self.assertEqual((1, ""), (code, out))
        self.assertEqual("murano-cidr: error: n1 holds no allocation\n", err)

    def test_list_table(self):
        code, out, _ = self.run_cli("list", "--scope", "r")
        lines = out.splitlines()
        self.assertEqual(0, code)
        self.assertEqual(["OWNER", "CIDR", "SCOPE", "STATE", "CREATED"],
                         lines[0].split())
        self.assertEqual(["held", "10.0.0.0/24", "r", "confirmed"],
                         lines[1].split()[:4])
        self.assertEqual(3, len(lines))

    def test_usage(self):
        code, out, _ = self.run_cli("usage", "--format", "json")
        self.assertEqual(0, code)
        self.assertEqual([("r", 2, 2), ("r2", 1, 3)],
                         [(r["scope"], r["allocated"], r["free"])
                          for r in json.loads(out)])
        code, out, _ = self.run_cli("usage", "--scope", "r", "--taken",
                                    "10.0.3.0/24")
        self.assertEqual(
            ["r", "4", "10.0.0.0/22", "/24", "4", "2", "0", "1", "1",
             "75.0", "0"],
            out.splitlines()[1].split())
        code, out, err = self.run_cli("usage", "--taken", "10.0.3.0/24")
        self.assertEqual((2, ""), (code, out))
        self.assertIn("give --scope too", err)


class TestImport(CommandTestCase):

    GOOD = ("scope,cidr,owner\n"
            "r,10.0.0.0/24,held\n"
            "r,10.0.3.0/24,new1\n"
            "r2,10.0.0.0/24,new2\n")

    def test_import_then_again_is_idempotent(self):
        path = self.write("good.csv", self.GOOD)
        code, out, err = self.run_cli("import", path)
        self.assertSucceeded(code, err)
        self.assertEqual("imported 2, already recorded 1, invalid 0, "
                         "conflicting 0\n", out)
        self.assertEqual("10.0.3.0/24", self.driver.get("new1").cidr)
        code, out, err = self.run_cli("import", path, "--format", "json")
        self.assertSucceeded(code, err)
        report = json.loads(out)
        self.assertEqual(3, report["counts"]["present"])
        self.assertEqual(["present"] * 3,
                         [r["status"] for r in report["rows"]])

    def test_dry_run_writes_nothing(self):
        path = self.write("good.csv", self.GOOD)
        before = self.owners()
        code, out, err = self.run_cli("import", path, "--dry-run")
        self.assertSucceeded(code, err)
        self.assertIn("would import 2", out)
        self.assertEqual(before, self.owners())

    def test_invalid_rows_write_nothing(self):
        path = self.write("bad.csv", self.GOOD + "r3,192.168.0.0/24,new3\n")
        before = self.owners()
        code, out, err = self.run_cli("import", path)
        self.assertEqual(2, code)
        self.assertEqual(before, self.owners())
        self.assertEqual(0, self.driver.import_calls)
        self.assertIn("line 5", out)
        self.assertIn("outside every configured pool", out)
        self.assertEqual(1, len(err.splitlines()))
        self.assertIn("1 invalid and 0 conflicting of 4 rows; nothing was "
                      "imported", err)

    def test_rejected_rows_print_escaped(self):
        # Issue 32: an owner or scope of an untrusted file reached the
        # terminal raw: a title change (OSC ... BEL) and red text.
        path = self.write("hostile.csv", self.GOOD + (
            "r\x1b[31m,192.168.0.0/24,own\x1b]0;pwned\x07er\n"))
        code, out, err = self.run_cli("import", "--dry-run", path)
        self.assertEqual(2, code)
        self.assertTrue(all(line.isprintable() for line in out.splitlines()),
                        repr(out))
        self.assertIn("own\\x1b]0;pwned\\x07er", out)
        self.assertIn("r\\x1b[31m", out)

    def test_the_table_shows_the_first_rejected_rows_only(self):
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.operator.cmd.migrating.SHOWN_ROWS", 2))
        path = self.write("bad.csv", self.GOOD + "".join(
            "r,nope,bad%d\n" % i for i in range(5)))
        code, out, err = self.run_cli("import", "--dry-run", path)
        self.assertEqual(2, code)
        self.assertEqual(["bad0", "bad1"], [
            line.split()[3] for line in out.splitlines()[1:3]])
        self.assertIn("... and 3 more rows not imported, not shown",
                      out.splitlines()[3])
        self.assertIn("invalid 5", out)
        code, out, err = self.run_cli("import", "--dry-run", path,
                                      "--format", "json")
        self.assertEqual(5, [r["status"] for r in json.loads(out)["rows"]]
                         .count("invalid"))

    def test_conflicts_write_nothing_unless_continuing(self):
        path = self.write("conflict.csv", self.GOOD + "r,10.0.1.0/24,new3\n")
        code, out, err = self.run_cli("import", path)
        self.assertEqual(1, code)
        self.assertIn("overlaps 10.0.1.0/24 held by owner gone", out)
        self.assertIsNone(self.driver.get("new1"))
        code, out, err = self.run_cli("import", path, "--continue-on-error")
        self.assertEqual(1, code)
        self.assertIn("were skipped", err)
        self.assertEqual("10.0.3.0/24", self.driver.get("new1").cidr)
        self.assertIsNone(self.driver.get("new3"))
        self.assertEqual("10.0.1.0/24", self.driver.get("gone").cidr)

    def run_on(self, stderr, *args):
        """Run the CLI with standard error on ``stderr``; return it."""
        self.useFixture(fixtures.StringStream("stdout"))
        self.useFixture(fixtures.MonkeyPatch("sys.stderr", stderr))
        self.assertEqual(0, cli.main(["--config-file", self.conf_file]
                                     + list(args)))
        return stderr.getvalue()

    def test_progress_is_drawn_on_a_terminal_only(self):
        path = self.write("good.csv", self.GOOD)
        err = self.run_on(_Terminal(), "import", path)
        self.assertIn("bytes read", err)
        self.assertIn("rows written", err)
        self.assertIn("\r", err)
        err = self.run_on(io.StringIO(), "import", "--dry-run", path)
        self.assertNotIn("bytes read", err)
        self.assertNotIn("\r", err)

    def test_a_terminal_without_tqdm_shows_a_count(self):
        path = self.write("good.csv", self.GOOD)
        # tqdm (an extra's) is not installed.
        self.useFixture(fixtures.MockPatch(
            "importlib.util.find_spec", return_value=None))
        err = self.run_on(_Terminal(), "import", path)
        size = os.path.getsize(path)
        self.assertIn("\r%d of %d bytes read (100%%)" % (size, size), err)
        self.assertIn("rows written", err)
        # Wiped at the end.
        self.assertTrue(err.endswith(" \r"), repr(err))
        self.assertEqual("", self.run_on(io.StringIO(), "import", path))

    def test_bad_file_is_one_line(self):
        path = self.write("bad.json", "[{")
        code, out, err = self.run_cli("import", path)
        self.assertEqual((2, ""), (code, out))
        self.assertEqual(1, len(err.splitlines()))
        self.assertIn("is not valid JSON", err)

    def test_stateless_driver_is_refused(self):
        self.use_stateless_driver()
        code, _, err = self.run_cli("import", self.write("a.csv", self.GOOD))
        self.assertEqual(1, code)
        self.assertIn("driver to one that does (db) first", err)


class TestPrune(CommandTestCase):

    def test_dry_run_then_apply(self):
        live = self.write("live.txt", "held\n")
        code, out, err = self.run_cli("prune", "--live-owners", live)
        self.assertSucceeded(code, err)
        self.assertIn("would release 1, keep 2 (1 live owners); dry run",
                      out)
        self.assertIn("gone", out)
        self.assertIn("within the grace period", out)
        self.assertEqual(["gone", "held", "young"], self.owners())
        code, out, err = self.run_cli("prune", "--live-owners", live,
                                      "--apply", "--format", "json")
        self.assertSucceeded(code, err)
        report = json.loads(out)
        self.assertEqual({"released": 1, "keep": 2}, report["counts"])
        self.assertEqual(86400, report["grace_seconds"])
        self.assertEqual(["held", "young"], self.owners())

    def test_grace_and_scope(self):
        live = self.write("live.json", '["held"]')
        code, out, _ = self.run_cli("prune", "--live-owners", live,
                                    "--grace", "30m", "--scope", "r2",
                                    "--apply", "--max-release", "100")
        self.assertEqual(0, code)
        self.assertEqual(["gone", "held"], self.owners())

    def test_refuses_to_release_most_allocations(self):
        live = self.write("live.txt", "someone-else\n")
        code, out, err = self.run_cli("prune", "--live-owners", live,
                                      "--grace", "0", "--apply")
        self.assertEqual((2, ""), (code, out))
        self.assertIn("would release 100% of the allocations, more than the "
                      "50% allowed", err)
        self.assertIn("--max-release 100", err)
        self.assertEqual(["gone", "held", "young"], self.owners())
        code, out, err = self.run_cli("prune", "--live-owners", live,
                                      "--grace", "0")
        self.assertEqual(0, code)
        self.assertIn("would release 3", out)
        self.assertRaises(SystemExit, self.run_cli, "prune", "--live-owners",
                          live, "--max-release", "101")

    def test_bad_arguments(self):
        code, _, err = self.run_cli("prune", "--live-owners",
                                    self.write("e.json", "[]"))
        self.assertEqual(2, code)
        self.assertIn("would release every allocation", err)
        self.assertEqual(3, len(self.owners()))
        self.assertRaises(SystemExit, self.run_cli, "prune", "--live-owners",
                          self.write("l.txt", "x"), "--grace", "soon")


class TestPruneFromMuranoDatabase(CommandTestCase):

    def murano(self, *environments):
        url = "sqlite:///" + os.path.join(self.state_path, "murano.db")
        engine = sa.create_engine(url)
        with engine.begin() as connection:
            murano_tables.create(connection)
            for i, networks in enumerate(environments):
                murano_tables.add_environment(connection, "env%d" % i,
                                              "e%d" % i, networks)
        engine.dispose()
        return url

    def test_owners_are_read_from_murano(self):
        url = self.murano(["held"])
        code, out, err = self.run_cli("prune", "--murano-db", url)
        self.assertSucceeded(code, err)
        self.assertIn("would release 1, keep 2 (1 live owners)", out)
        code, out, err = self.run_cli("prune", "--murano-db", url, "--apply")
        self.assertSucceeded(code, err)
        self.assertEqual(["held", "young"], self.owners())

    def test_the_url_may_come_from_the_environment(self):
        self.useFixture(fixtures.EnvironmentVariable(
            "MURANO_CIDR_MURANO_DB", self.murano(["held"])))
        code, out, err = self.run_cli("prune", "--apply")
        self.assertSucceeded(code, err)
        self.assertEqual(["held", "young"], self.owners())

    def test_with_a_live_owners_file_both_count(self):
        live = self.write("live.txt", "gone\n")
        code, out, err = self.run_cli("prune", "--murano-db",
                                      self.murano(["held"]), "--live-owners",
                                      live, "--grace", "0")
        self.assertSucceeded(code, err)
        self.assertIn("would release 1, keep 2 (2 live owners)", out)
        self.assertIn("young", out)

    def test_no_source_or_an_empty_murano_is_refused(self):
        code, out, err = self.run_cli("prune")
        self.assertEqual((2, ""), (code, out))
        self.assertIn("say where the live owners come from", err)
        code, out, err = self.run_cli("prune", "--murano-db", self.murano(),
                                      "--apply", "--max-release", "100")
        self.assertEqual((2, ""), (code, out))
        self.assertIn("holds no environment", err)
        self.assertEqual(3, len(self.owners()))

    def test_an_unreachable_murano_is_one_line(self):
        code, out, err = self.run_cli(
            "prune", "--murano-db",
            "postgresql+psycopg2://m:secret@127.0.0.1:1/murano")
        self.assertEqual((3, ""), (code, out))
        self.assertEqual(1, len(err.strip().splitlines()), err)
        self.assertNotIn("secret", err)


class TestReconcile(CommandTestCase):

    def listings(self, ports):
        subnets = self.write("subnets.json", json.dumps([
            {"ID": "s0", "Network": "n0", "Subnet": "10.0.0.0/24"},
            {"ID": "s1", "Network": "n1", "Subnet": "10.0.1.0/24"}]))
        directory = os.path.join(self.state_path, "ports")
        os.makedirs(directory, exist_ok=True)
        for router, subnet_ids in ports.items():
            self.write("ports/%s.json" % router, json.dumps(
                [{"Fixed IP Addresses": [{"subnet_id": s}]}
                 for s in subnet_ids]))
        return "--subnets", subnets, "--ports-dir", directory

    def test_dry_run_then_apply(self):
        args = self.listings({"r": ["s0"], "r2": []})
        code, out, err = self.run_cli("reconcile", *args)
        self.assertSucceeded(code, err)
        self.assertIn("would release 1, keep 2 (1 on their router); dry run",
                      out)
        self.assertIn("its router carries no subnet overlapping it", out)
        self.assertIn("within the grace period", out)
        self.assertEqual(["gone", "held", "young"], self.owners())
        code, out, err = self.run_cli("reconcile", *args, "--apply",
                                      "--format", "json")
        self.assertSucceeded(code, err)
        report = json.loads(out)
        self.assertEqual({"released": 1, "keep": 2}, report["counts"])
        self.assertEqual(
            {"held": "on-router", "gone": "not-on-router",
             "young": "in-grace"},
            {a["owner"]: a["code"] for a in report["allocations"]})
        self.assertEqual(["held", "young"], self.owners())

    def test_unlisted_routers_are_kept_and_the_share_is_guarded(self):
        args = self.listings({"r": []})
        code, out, err = self.run_cli("reconcile", *args, "--grace", "0",
                                      "--apply")
        self.assertEqual((2, ""), (code, out))
        self.assertIn("reconcile plan", err)
        self.assertIn("would release 66%", err)
        self.assertEqual(3, len(self.owners()))
        code, out, err = self.run_cli("reconcile", *args, "--grace", "0",
                                      "--apply", "--max-release", "70")
        self.assertSucceeded(code, err)
        self.assertEqual(["young"], self.owners())
        self.assertIn("released 2", out)

    def test_a_stateless_driver_is_refused(self):
        self.use_stateless_driver()
        code, out, err = self.run_cli("reconcile", *self.listings({}))
        self.assertEqual((1, ""), (code, out))
        self.assertIn("cannot reconcile allocations", err)


class TestStoreClock(CommandTestCase):
    """prune and reconcile measure ages on the store's clock."""

    def setUp(self):
        super().setUp()
        # The database server's clock is two days ahead of this host's:
        # "young", created an hour ago by the host's clock, was created
        # two days ago by the clock that stamped it.
        self.driver.clock_offset = 2 * DAY

    def test_reconcile_uses_the_store_clock(self):
        code, out, err = self.run_cli(
            "reconcile", *TestReconcile.listings(self, {"r": ["s0"],
                                                        "r2": []}))
        self.assertSucceeded(code, err)
        self.assertIn("would release 2, keep 1 (1 on their router); dry "
                      "run", out)
        self.assertNotIn("within the grace period", out)

    def test_prune_uses_the_store_clock(self):
        live = self.write("live.txt", "held\n")
        code, out, err = self.run_cli("prune", "--live-owners", live)
        self.assertSucceeded(code, err)
        self.assertIn("would release 2, keep 1 (1 live owners)", out)


class TestConvertOpenstack(CommandTestCase):

    def test_rows_on_stdout_skips_on_stderr(self):
        subnets = self.write("subnets.json", json.dumps([
            {"ID": "s1", "Network": "n1", "Subnet": "10.0.1.0/24"},
            {"ID": "s2", "Network": "pub", "Subnet": "172.24.4.0/24"}]))
        os.makedirs(os.path.join(self.state_path, "ports"))
        self.write("ports/r.json", json.dumps([
            {"Fixed IP Addresses": [{"subnet_id": "s1"}]},
            {"Fixed IP Addresses": [{"subnet_id": "s2"}]}]))
        code, out, err = self.run_cli(
            "convert-openstack", "--subnets", subnets, "--ports-dir",
            os.path.join(self.state_path, "ports"))
        self.assertEqual(0, code)
        self.assertEqual([{"scope": "r", "cidr": "10.0.1.0/24",
                           "owner": "n1"}], json.loads(out))
        self.assertEqual("murano-cidr: skipped subnet s2 of router r: "
                         "172.24.4.0/24 is outside the pools\n", err)

    def test_skipped_ids_print_escaped(self):
        subnets = self.write("subnets.json", json.dumps([
            {"ID": "s\x1b]0;x\x07", "Network": "pub",
             "Subnet": "172.24.4.0/24"}]))
        os.makedirs(os.path.join(self.state_path, "ports"))
        self.write("ports/r\x1b[31m.json", json.dumps([
            {"Fixed IP Addresses": [{"subnet_id": "s\x1b]0;x\x07"}]}]))
        code, out, err = self.run_cli(
            "convert-openstack", "--subnets", subnets, "--ports-dir",
            os.path.join(self.state_path, "ports"))
        self.assertEqual(0, code)
        self.assertEqual("murano-cidr: skipped subnet s\\x1b]0;x\\x07 of "
                         "router r\\x1b[31m: 172.24.4.0/24 is outside the "
                         "pools\n", err)


class TestDiagnosis(CommandTestCase):
    """Bad input names the file, the place and what is missing."""

    def assertOneError(self, code, err, *fragments):
        self.assertEqual(common.EXIT_USAGE, code, err)
        self.assertEqual(1, len(err.strip().splitlines()), err)
        for fragment in fragments:
            self.assertIn(fragment, err)

    def test_reconcile_names_the_subnet_whose_cidr_is_bad(self):
        subnets = self.write("subnets.json", (
            '[\n {"ID": "s0", "Network": "n0", "Subnet": "10.0.0.0/24"},\n'
            ' {"ID": "s-bad", "Network": "n1", "Subnet": "nope"}\n]\n'))
        os.makedirs(os.path.join(self.state_path, "ports"))
        self.write("ports/r.json", json.dumps(
            [{"Fixed IP Addresses": [{"subnet_id": "s-bad"}]}]))
        code, _out, err = self.run_cli(
            "reconcile", "--subnets", subnets, "--ports-dir",
            os.path.join(self.state_path, "ports"))
        self.assertOneError(code, err, subnets + ": line 3: subnet s-bad",
                            "its CIDR 'nope': it has no prefix length")
        self.assertNotIn("taken", err)

    def test_import_names_the_columns_a_header_lacks(self):
        path = self.write("wrong.csv", "router,network,subnet\n"
                          "r,n1,10.0.3.0/24\n")
        code, out, err = self.run_cli("import", path)
        self.assertOneError(code, err, path + ": line 1: the header "
                            "router,network,subnet lacks the column cidr",
                            "unknown: subnet")
        self.assertEqual("", out)
        self.assertEqual(["gone", "held", "young"], self.owners())

    def test_import_of_garbage_on_stdin_names_the_columns(self):
        self.useFixture(fixtures.MonkeyPatch(
            "sys.stdin", io.TextIOWrapper(io.BytesIO(
                b"garbage garbage\nmore garbage\n"))))
        code, _out, err = self.run_cli("import", "-")
        self.assertOneError(code, err, "-: line 1: the header garbage "
                            "garbage lacks the columns owner, cidr and scope")
        self.assertNotIn("holds no allocation", err)

    def test_rejected_rows_show_what_the_file_had(self):
        path = self.write("rejected.csv", "scope,cidr,owner\n"
                          "r9,nope,n1\n"
                          "r9,10.9.0.0/24,n2\n")
        code, out, _err = self.run_cli("import", path)
        self.assertEqual(common.EXIT_USAGE, code)
        rows = [line.split()[:5] for line in out.splitlines()[1:3]]
        self.assertEqual([["line", "2", "invalid", "n1", "nope"],
                          ["line", "3", "invalid", "n2", "10.9.0.0/24"]],
                         rows)
        self.assertIn(" r9 ", out)
        code, out, _err = self.run_cli("import", path, "--format", "json")
        shown = json.loads(out)["rows"]
        self.assertEqual({"owner": "n1", "cidr": "nope", "scope": "r9"},
                         {k: shown[0][k] for k in ("owner", "cidr", "scope")})
