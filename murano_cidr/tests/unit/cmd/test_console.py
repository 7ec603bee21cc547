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

"""The console scripts as a user meets them: help, version, quiet output."""

import argparse
import importlib
import importlib.metadata
import io
import json
import os
import sys

import fixtures

import murano_cidr
from murano_cidr.operator.cmd import cli
from murano_cidr.operator.cmd import manage
from murano_cidr.operator.cmd import status
from murano_cidr.tests import base

# argparse's heading of the options: "optional arguments:" before 3.10.
OPTIONS = ("options:" if sys.version_info >= (3, 10)
           else "optional arguments:")


class ConsoleTestCase(base.TestCase):

    def run_exiting(self, main, *args):
        """Run a main that exits through argparse (--help, --version).

        :returns: ``(exit code, standard output, standard error)``.
        """
        out, err = io.StringIO(), io.StringIO()
        self.useFixture(fixtures.MonkeyPatch("sys.stdout", out))
        self.useFixture(fixtures.MonkeyPatch("sys.stderr", err))
        e = self.assertRaises(SystemExit, main, list(args))
        return e.code, out.getvalue(), err.getvalue()


class TestHelp(ConsoleTestCase):

    def assertInOrder(self, text, *parts):
        """Each part is found in text after the one before it."""
        position = 0
        for part in parts:
            found = text.find(part, position)
            self.assertNotEqual(-1, found, "%r not after %r in:\n%s"
                                % (part, text[:position][-40:], text))
            position = found + len(part)

    def test_murano_cidr_describes_itself_and_lists_commands(self):
        code, out, _err = self.run_exiting(cli.main, "--help")
        self.assertEqual(0, code)
        self.assertTrue(out.startswith(
            "usage: murano-cidr [--config-file PATH] [--verbose | --debug] "
            "COMMAND [ARGS]\n"), out)
        # The description names the commands before the options.
        self.assertInOrder(out, "usage:", cli.DESCRIPTION[:40], "(allocate,",
                           "simulate, bench", OPTIONS, "\n  --config-file",
                           "\n  --log-dir", "\n  --use-syslog", "Commands:",
                           "\n  COMMAND ", "\n    allocate ",
                           "\n    release ", "\n    simulate ",
                           "\n    bench ", "Without --config-file")

    def test_manage_describes_itself_and_lists_commands(self):
        code, out, _err = self.run_exiting(manage.main, "--help")
        self.assertEqual(0, code)
        self.assertInOrder(out, "usage: murano-cidr-manage",
                           manage.DESCRIPTION[:40], OPTIONS, "\n  --log-dir",
                           "Commands:", "\n    db ")

    def test_a_command_is_named_after_its_script(self):
        for main, args, usage in (
                (cli.main, ("list", "--help"), "usage: murano-cidr list "),
                (manage.main, ("db", "sync", "--help"),
                 "usage: murano-cidr-manage db sync ")):
            code, out, _err = self.run_exiting(main, *args)
            self.assertEqual(0, code)
            self.assertTrue(out.startswith(usage), out)

    def test_each_command_summary_is_its_modules(self):
        # cli lists the commands it does not load with its own summary.
        for name, module, summary in cli.COMMANDS:
            parser = argparse.ArgumentParser(prog="x")
            helps = {}
            recorder = parser.add_subparsers()
            original = recorder.add_parser

            def record(command, **kwargs):
                helps[command] = kwargs.get("help")
                return original(command, **kwargs)

            recorder.add_parser = record
            importlib.import_module(
                "murano_cidr.operator.cmd." + module).register(recorder)
            self.assertEqual(summary, helps[name], name)

    def test_status_describes_itself_first(self):
        code, out, _err = self.run_exiting(status.main, "--help")
        self.assertEqual(0, code)
        self.assertInOrder(out, "usage: murano-cidr-status",
                           status.DESCRIPTION[:40],
                           OPTIONS, "\n  --log-dir")


class TestVersion(ConsoleTestCase):

    def test_every_script_prints_the_version(self):
        for main in (cli.main, manage.main, status.main):
            code, out, err = self.run_exiting(main, "--version")
            self.assertEqual((0, murano_cidr.__version__ + "\n", ""),
                             (code, out, err), main.__module__)

    def test_the_version_is_the_installed_one(self):
        # pbr's short version_string() dropped the .devN suffix.
        self.assertEqual(importlib.metadata.version("murano-cidr"),
                         murano_cidr.__version__)


class TestQuietOutput(base.TestCase):
    """Commands print their result; log lines only with --verbose."""

    def setUp(self):
        super().setUp()
        self.conf_file = self.db_config_file(
            self.use_database("sqlite", sync=True))

    def cidr(self, *args):
        return self.run_main(cli.main, "--config-file", self.conf_file, *args)

    def test_no_log_lines_without_verbose(self):
        rows = os.path.join(self.state_path, "rows.json")
        with open(rows, "w") as f:
            json.dump([{"scope": "r", "cidr": "10.0.3.0/24",
                        "owner": "old"}], f)
        # The import first: a released CIDR stays held, and the pick is
        # random.
        for args in (("import", rows), ("allocate", "net-1", "--scope", "r"),
                     ("confirm", "net-1"), ("release", "net-1"),
                     ("list",), ("usage",)):
            code, out, err = self.cidr(*args)
            self.assertEqual((0, ""), (code, err), args)
            self.assertNotEqual("", out, args)

    def test_verbose_logs_what_the_command_does(self):
        code, out, err = self.cidr("--verbose", "allocate", "net-1",
                                   "--scope", "r")
        self.assertEqual(0, code)
        self.assertIn("INFO murano_cidr.engine.drivers.db", err)
        self.assertIn("Allocated %s to net-1" % out.strip(), err)

    def test_usage_json_has_each_figure_once(self):
        self.cidr("allocate", "net-1", "--scope", "r")
        code, out, err = self.cidr("usage", "--format", "json")
        self.assertEqual((0, ""), (code, err))
        self.assertEqual(
            [{"scope": "r", "ip_version": 4, "pool": "10.0.0.0/22",
              "prefixlen": 24, "size": 4, "allocated": 1, "released": 0,
              "taken": 0, "free": 3, "used_percent": 25.0, "outside": 0}],
            json.loads(out))

    def test_usage_flags_allocations_outside_a_changed_pool(self):
        self.cidr("allocate", "net-1", "--scope", "r")
        self.cidr("allocate", "net-2", "--scope", "r")
        with open(self.conf_file) as f:
            text = f.read()
        with open(self.conf_file, "w") as f:
            f.write(text.replace("pool_cidrs = 10.0.0.0/22",
                                 "pool_cidrs = 10.8.0.0/22"))
        code, out, err = self.cidr("usage", "--format", "json")
        self.assertEqual(0, code, err)
        row, = json.loads(out)
        self.assertEqual((0, 2), (row["allocated"], row["outside"]))
        self.assertIn("warning: 2 live allocation(s) lie outside the "
                      "configured pool", err)
        code, out, err = self.cidr("usage")
        self.assertEqual("OUTSIDE", out.splitlines()[0].split()[-1])
        self.assertEqual("2", out.splitlines()[1].split()[-1])

    def test_a_released_cidr_is_listed_and_counted_until_freed(self):
        _, cidr, _ = self.cidr("allocate", "net-1", "--scope", "r")
        self.cidr("allocate", "net-2", "--scope", "r")
        self.assertEqual((0, "released net-1\n", ""),
                         self.cidr("release", "net-1"))
        code, out, err = self.cidr("list")
        self.assertEqual((0, ""), (code, err))
        rows = sorted(line.split()[:4] for line in out.splitlines()[1:])
        self.assertIn(["net-1", cidr.strip(), "r", "released"], rows)
        self.assertEqual(2, len(rows))
        code, out, err = self.cidr("usage", "--format", "json")
        usage = json.loads(out)[0]
        self.assertEqual((2, 1, 2), (usage["allocated"], usage["released"],
                                     usage["free"]))
        self.assertEqual((1, ""), self.cidr("show", "net-1")[:2])

    def test_errors_print_values_not_lists(self):
        code, out, err = self.cidr("usage", "--taken", "10.0.0.0/24",
                                   "--taken", "10.0.1.0/24")
        self.assertEqual(2, code)
        self.assertEqual(
            "murano-cidr: error: Invalid --taken '10.0.0.0/24, 10.0.1.0/24': "
            "lists CIDRs of one router; give --scope too\n", err)
