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

"""``murano-cidr`` and ``murano-cidr-status`` end to end, in subprocesses.

Every command runs as an operator runs it (``python -m ...`` in a new
process, reading a configuration file) against the ``db`` driver on SQLite
and on PostgreSQL. Process start-up is what these tests cost, so each test
batches the assertions of one operator workflow; the many variations of bad
input are checked in-process (:func:`murano_cidr.operator.cmd.cli.main`)
against the same database, and one of them in a subprocess for its output.
"""

import datetime
import json
import os
import subprocess
import sys

import fixtures
from oslo_config import cfg
import testscenarios

from murano_cidr.engine import allocation as allocation_mod
from murano_cidr.engine import allocator
from murano_cidr.operator.cmd import cli
from murano_cidr.operator.drivers import commands
from murano_cidr.operator.drivers.db import migration
from murano_cidr.tests import base
from murano_cidr.tests import db_fixture

load_tests = testscenarios.load_tests_apply_scenarios

#: Four /24 subnets per scope.
POOL = ["10.0.0.0/24", "10.0.1.0/24", "10.0.2.0/24", "10.0.3.0/24"]
DAYS_AGO = datetime.timedelta(days=2)


class CommandTestCase(base.TestCase):

    scenarios = [(backend, {"backend": backend})
                 for backend in (db_fixture.SQLITE, db_fixture.POSTGRESQL)]

    def setUp(self):
        super().setUp()
        db = self.use_database(self.backend)
        self.conf_file = self.write_config(
            "[cidr_allocator]\ndriver = db\nstate_path = %s\n"
            "pool_cidrs = 10.0.0.0/22\nsubnet_prefixlen = 24\n"
            "max_environments = 4\n"
            "[cidr_allocator_database]\nconnection = %s\n"
            % (self.state_path, db.url))

    def write_config(self, text, name="murano-cidr.conf"):
        return self.write(name, text)

    def write(self, name, text):
        path = os.path.join(self.state_path, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def load_conf(self):
        conf = cfg.ConfigOpts()
        commands.register_opts(conf)
        conf(args=[], default_config_files=[self.conf_file])
        return conf

    def sync(self):
        migration.upgrade(self.load_conf())

    def driver(self):
        driver = allocator.get_allocator(self.load_conf())
        self.addCleanup(driver.close)
        return driver

    def snapshot(self):
        driver = self.driver()
        return sorted((a.owner, a.cidr, a.scope) for a in driver.list())

    def run_cmd(self, module, *args):
        """Run a console script in a new process; return (code, out, err)."""
        result = subprocess.run(
            [sys.executable, "-m", module, "--config-file", self.conf_file]
            + list(args), capture_output=True, text=True, timeout=120)
        self.assertNotIn("Traceback", result.stderr)
        return result.returncode, result.stdout, result.stderr

    def cidr(self, *args):
        return self.run_cmd("murano_cidr.operator.cmd.cli", *args)

    def status(self, *args):
        return self.run_cmd("murano_cidr.operator.cmd.status", "upgrade",
                            "check", *args)

    def cidr_in_process(self, *args):
        return self.run_main(cli.main, "--config-file", self.conf_file,
                             *args)

    def error_lines(self, err):
        return [line for line in err.splitlines() if "error:" in line]


class TestStatus(CommandTestCase):

    def test_unsynced_database_fails_until_synced(self):
        code, out, err = self.status("--json")
        self.assertEqual(2, code, err)
        checks = {c["check"]: c for c in json.loads(out)["checks"]}
        self.assertEqual(2, checks["Database"]["result"])
        self.assertIn("has no murano-cidr tables; run 'murano-cidr-manage",
                      checks["Database"]["details"])
        self.assertEqual(0, checks["Pool geometry"]["result"])
        self.assertEqual(0, checks["Allocator driver"]["result"])
        code, out, err = self.cidr("list")
        self.assertEqual(2, code)
        self.assertEqual(1, len(self.error_lines(err)), err)
        self.assertIn("db sync", err)

        self.sync()
        code, out, err = self.status("--json")
        checks = {c["check"]: c for c in json.loads(out)["checks"]}
        self.assertIn("is at the head revision",
                      checks["Database"]["details"])
        self.assertEqual(0, checks["Database"]["result"])
        # SQLite serves the engines of one host only: a warning, exit 1.
        one_host = 1 if self.backend == db_fixture.SQLITE else 0
        self.assertEqual(one_host, checks["Store hosts"]["result"])
        self.assertEqual(one_host, code, out + err)


class TestStatusPool(CommandTestCase):

    # NOTE: the pool check reads no database; one backend is enough.
    scenarios = [(db_fixture.SQLITE, {"backend": db_fixture.SQLITE})]

    def test_bad_pool_fails(self):
        self.sync()
        with open(self.conf_file, "a") as f:
            f.write("[cidr_allocator]\nsubnet_prefixlen = 19\n")
        code, out, err = self.status("--json")
        self.assertEqual(2, code, err)
        checks = {c["check"]: c for c in json.loads(out)["checks"]}
        self.assertEqual(2, checks["Pool geometry"]["result"])
        self.assertIn("[cidr_allocator] subnet_prefixlen",
                      checks["Pool geometry"]["details"])
        self.assertEqual(2, checks["Allocator driver"]["result"])


class TestImportAndAllocate(CommandTestCase):

    def setUp(self):
        super().setUp()
        self.sync()

    def test_import_then_allocate_never_returns_an_imported_cidr(self):
        existing = self.write("existing.json", json.dumps([
            {"router_id": "r", "cidr": POOL[0], "network_id": "n0"},
            {"router_id": "r", "cidr": POOL[1], "network_id": "n1"},
            {"router_id": "r", "cidr": POOL[3], "network_id": "n3"},
            {"router_id": "other", "cidr": POOL[2], "network_id": "o2"}]))
        code, out, err = self.cidr("import", existing)
        self.assertEqual(0, code, err)
        self.assertEqual("imported 4, already recorded 0, invalid 0, "
                         "conflicting 0\n", out)
        before = self.snapshot()
        code, out, err = self.cidr_in_process("import", existing)
        self.assertEqual((0, []), (code, self.error_lines(err)))
        self.assertIn("already recorded 4", out)
        self.assertEqual(before, self.snapshot())

        # The only free subnet of scope r is the one nobody imported.
        code, out, err = self.cidr("allocate", "new", "--scope", "r",
                                   "--format", "json")
        self.assertEqual(0, code, err)
        self.assertEqual(POOL[2], json.loads(out)["cidr"])
        code, _out, err = self.cidr_in_process("allocate", "more", "--scope",
                                               "r")
        self.assertEqual(1, code)
        self.assertIn("no free /24 for scope r", err)

        code, out, err = self.cidr("confirm", "new")
        self.assertEqual((0, "confirmed new\n"), (code, out))
        code, out, err = self.cidr("show", "new", "--format", "json")
        self.assertEqual((POOL[2], True), (json.loads(out)["cidr"],
                                           json.loads(out)["confirmed"]))
        code, out, err = self.cidr("usage", "--format", "json")
        self.assertEqual(
            [("other", 1, 3), ("r", 4, 0)],
            [(u["scope"], u["allocated"], u["free"])
             for u in json.loads(out)])
        code, out, err = self.cidr("release", "new")
        self.assertEqual((0, "released new\n"), (code, out))
        # Held back, its subnet may still be on the router.
        code, out, err = self.cidr("list", "--scope", "r")
        self.assertEqual([["n0", "confirmed"], ["n1", "confirmed"],
                          ["n3", "confirmed"], ["new", "released"]],
                         [line.split()[0:4:3]
                          for line in out.splitlines()[1:]])

    def test_bad_input_files_write_nothing(self):
        self.driver().import_allocations([
            allocation_mod.Allocation("held", POOL[0], "r")])
        before = self.snapshot()
        header = "scope,cidr,owner\nr,%s,new\n" % POOL[1]
        bad_files = [
            ("malformed.json", '[{"scope": "r", "cidr": "%s"' % POOL[1],
             "is not valid JSON"),
            ("malformed.csv", 'scope,cidr,owner\nr,"%s"x,n\n' % POOL[1],
             "is not valid CSV"),
            ("badcidr.csv", header + "r,10.0.2.0/33,bad\n",
             "not an IPv4 or IPv6 network in CIDR notation"),
            ("hostbits.csv", header + "r,10.0.2.9/24,bad\n",
             "host bits set"),
            ("missing.json", '[{"scope": "r", "owner": "bad"}]',
             "missing cidr"),
            ("outside.csv", header + "r,192.168.0.0/24,bad\n",
             "outside every configured pool"),
            ("duplicate.csv", header + "r2,%s,new\n" % POOL[2],
             "owner new appears again"),
            ("conflict.csv", header + "r,%s,bad\n" % POOL[0],
             "held by owner held"),
        ]
        # One in a subprocess, for what an operator sees.
        name, content, reason = bad_files[-2]
        code, out, err = self.cidr("import", self.write(name, content))
        self.assertEqual(2, code)
        self.assertIn(reason, out)
        self.assertEqual(1, len(self.error_lines(err)), err)
        self.assertIn("nothing was imported", err)
        for name, content, reason in bad_files:
            code, _out, err = self.cidr_in_process(
                "import", self.write(name, content))
            self.assertIn(code, (1, 2), name)
            self.assertEqual(1, len(self.error_lines(err)), err)
            self.assertEqual(before, self.snapshot(), name)

        # With --continue-on-error the valid rows go in, the others not.
        code, _out, err = self.cidr_in_process(
            "import", self.write("mixed.csv", header + "r,%s,bad\n"
                                 % POOL[0]), "--continue-on-error")
        self.assertEqual(1, code)
        self.assertEqual(before + [("new", POOL[1], "r")], self.snapshot())

    def test_a_bad_row_late_in_a_large_file_changes_nothing(self):
        # 600 rows, recorded 100 at a time in one transaction: a row
        # refused at the end leaves the table as it was.
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.operator.drivers.db.bulk_import.BATCH", 100))
        self.driver().import_allocations([
            allocation_mod.Allocation("held", POOL[0], "r")])
        before = self.snapshot()
        rows = "scope,cidr,owner\n" + "".join(
            "s%d,%s,n%d\n" % (i // 4, POOL[i % 4], i) for i in range(600))
        late_overlap = self.write("overlap.csv", rows + "s0,%s,x\n" % POOL[1])
        late_conflict = self.write("conflict.csv",
                                   rows + "r,%s,x\n" % POOL[0])
        for path, code, reason in ((late_overlap, 2, "line 602"),
                                   (late_conflict, 1, "held by owner held")):
            for dry_run in ((), ("--dry-run",)):
                result = self.cidr_in_process("import", path, *dry_run)
                self.assertEqual(code, result[0], result[2])
                self.assertIn(reason, result[1])
                self.assertEqual(before, self.snapshot())
        # The same conflict, unseen by the plan (an allocation made
        # meanwhile): the database refuses the last part.
        with fixtures.MockPatch(
                "murano_cidr.operator.operations.importing.plan",
                side_effect=lambda rows, existing: rows):
            code, _out, err = self.cidr_in_process("import", late_conflict)
        self.assertEqual(1, code, err)
        self.assertIn("10.0.0.0/24", err)
        self.assertEqual(before, self.snapshot())
        code, out, err = self.cidr_in_process(
            "import", self.write("good.csv", rows))
        self.assertEqual(0, code, err)
        self.assertEqual("imported 600, already recorded 0, invalid 0, "
                         "conflicting 0\n", out)
        self.assertEqual(601, len(self.snapshot()))


class TestPrune(CommandTestCase):

    def setUp(self):
        super().setUp()
        self.sync()
        old = (datetime.datetime.now(datetime.timezone.utc) - DAYS_AGO)
        self.driver().import_allocations([
            allocation_mod.Allocation("live", POOL[0], "r", created_at=old),
            allocation_mod.Allocation("gone", POOL[1], "r", created_at=old),
            allocation_mod.Allocation("gone2", POOL[0], "r2", created_at=old),
            allocation_mod.Allocation("young", POOL[2], "r")])

    def test_prune_keeps_live_and_young_allocations(self):
        live = self.write("live.json", json.dumps([{"ID": "live"}]))
        before = self.snapshot()
        code, out, err = self.cidr("prune", "--live-owners", live,
                                   "--format", "json")
        self.assertEqual(0, code, err)
        actions = {a["owner"]: a["action"]
                   for a in json.loads(out)["allocations"]}
        self.assertEqual({"live": "keep", "gone": "release",
                          "gone2": "release", "young": "keep"}, actions)
        self.assertEqual(before, self.snapshot())

        code, out, err = self.cidr("prune", "--live-owners", live,
                                   "--scope", "r", "--apply")
        self.assertEqual(0, code, err)
        self.assertIn("released 1,", out)
        self.assertEqual(["gone2", "live", "young"],
                         sorted(o for o, _c, _s in self.snapshot()))

        code, out, err = self.cidr("prune", "--live-owners", live,
                                   "--grace", "3d", "--apply")
        self.assertEqual(0, code, err)
        self.assertIn("released 0,", out)
        self.assertEqual(["gone2", "live", "young"],
                         sorted(o for o, _c, _s in self.snapshot()))
