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

"""simulate and bench: every option explained, the shared ones alike."""

import csv
import io

import fixtures

from murano_cidr.measuring.bench import backends
from murano_cidr.measuring.bench import runner as bench_runner
from murano_cidr.operator.cmd import cli
from murano_cidr.tests.unit.cmd import test_console
from murano_cidr.tests.unit.measuring.bench import test_bench

#: Where argparse starts an option's help when it does not fit beside it.
HELP_COLUMN = 24


def options_without_help(text):
    """Return the options of a ``--help`` text that have no help.

    :param text: argparse's help output.
    :returns: the invocations (``--max-hosts N``) with nothing to say.
    """
    lines = text.splitlines() + [""]
    missing = []
    for line, following in zip(lines, lines[1:]):
        if not line.startswith("  -"):
            continue
        invocation, _, help_text = line.strip().partition("  ")
        continued = (following.startswith(" " * HELP_COLUMN)
                     and following.strip())
        if not help_text.strip() and not continued:
            missing.append(invocation)
    return missing


class TestHelp(test_console.ConsoleTestCase):

    def help(self, command):
        code, out, _err = self.run_exiting(cli.main, command, "--help")
        self.assertEqual(0, code)
        return out

    def test_every_option_has_help(self):
        for command in ("simulate", "bench"):
            out = self.help(command)
            self.assertTrue(out.startswith("usage: murano-cidr %s [-h]"
                                           % command), out)
            self.assertEqual([], options_without_help(out), command)

    def test_shared_options_are_spelled_alike(self):
        for command in ("simulate", "bench"):
            out = self.help(command)
            for option in ("--db-connection URL", "--coordination-url URL",
                           "--format {table,json,csv}"):
                self.assertIn("\n  " + option, out, command)

    def test_the_check_finds_a_bare_option(self):
        self.assertEqual(["--max-hosts N"], options_without_help(
            "options:\n  --max-hosts N\n  --seed N     Seed.\n"))


#: What bench says of :func:`test_bench.doc`, whose target b failed.
TARGET_B_FAILED = (1, "murano-cidr bench: error: 1 of 2 targets failed: b\n")


class TestBenchOptions(test_console.ConsoleTestCase):

    def setUp(self):
        super().setUp()
        self.run = self.useFixture(fixtures.MockPatchObject(
            bench_runner, "run", return_value=test_bench.doc())).mock

    def bench(self, *args):
        return self.run_main(cli.main, "bench", "--quiet", *args)

    def settings(self):
        return self.run.call_args[0][0]

    def test_db_connection_replaces_the_database_of_its_kind(self):
        mysql = "mysql+pymysql://u:p@db.example/murano"
        sqlite = "sqlite:////var/tmp/bench.sqlite"
        code, _out, err = self.bench("--db-connection", mysql,
                                     "--db-connection", sqlite)
        self.assertEqual(TARGET_B_FAILED, (code, err))
        settings = self.settings()
        self.assertEqual((mysql, sqlite, backends.DEFAULT_POSTGRESQL_URL),
                         (settings.mysql_url, settings.sqlite_url,
                          settings.postgresql_url))

    def test_coordination_url_is_the_redis_measured(self):
        code, _out, err = self.bench("--coordination-url", "redis://r:7")
        self.assertEqual(TARGET_B_FAILED, (code, err))
        self.assertEqual("redis://r:7", self.settings().redis_url)

    def test_deprecated_urls_still_work(self):
        code, _out, err = self.bench(
            "--postgresql-url", "postgresql://u:p@h/d",
            "--redis-url", "redis://r:8")
        self.assertEqual(TARGET_B_FAILED, (code, err))
        self.assertEqual(("postgresql://u:p@h/d", "redis://r:8"),
                         (self.settings().postgresql_url,
                          self.settings().redis_url))

    def test_bad_urls_are_one_line(self):
        for args, text in (
                (("--db-connection", "oracle://h/x"),
                 "is not an SQLite, MySQL or PostgreSQL URL"),
                (("--coordination-url", "etcd3+http://h:2379"),
                 "on Redis")):
            code, out, err = self.bench(*args)
            self.assertEqual((2, ""), (code, out))
            self.assertEqual(1, len(err.splitlines()), err)
            self.assertIn(text, err)
        self.run.assert_not_called()

    def test_csv(self):
        code, out, err = self.bench("--format", "csv")
        self.assertEqual(TARGET_B_FAILED, (code, err))
        rows = list(csv.DictReader(io.StringIO(out)))
        by_key = {(r["section"], r["name"], r["metric"]): r["value"]
                  for r in rows}
        self.assertEqual("50.0", by_key[("driver", "db-sqlite",
                                         "throughput")])
        self.assertEqual("0.006", by_key[("fill", "db-sqlite",
                                          "turns packed 90% p90")])
        self.assertEqual("db is unreachable",
                         by_key[("driver", "db-mysql", "skipped")])
        self.assertEqual("False", by_key[("target", "b", "passed")])
