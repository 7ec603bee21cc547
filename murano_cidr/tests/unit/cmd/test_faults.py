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

"""Faults an operator can cause: one typed line, a non-zero exit, no trace.

Each case used to end in "unexpected error" (an untyped exception) or in a
library's traceback on the terminal.
"""

import os

import fixtures
import sqlalchemy as sa

from murano_cidr import exceptions
from murano_cidr.operator.cmd import cli
from murano_cidr.operator.cmd import common
from murano_cidr.operator.cmd import manage
from murano_cidr.operator.cmd import status
from murano_cidr.operator.drivers.db import migration
from murano_cidr.operator.drivers.db import revisions
from murano_cidr.operator import errors
from murano_cidr.operator.operations import files
from murano_cidr.operator.operations import pruning
from murano_cidr.tests import base

#: Deeper than Python's JSON parser can go.
DEEP_JSON = "[" * 100000 + "]" * 100000


class FaultTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.database = os.path.join(self.state_path, "murano-cidr.sqlite")
        self.conf_file = self.write(
            "murano-cidr.conf",
            "[cidr_allocator]\nstate_path = %s\n"
            "[cidr_allocator_database]\nconnection = sqlite:///%s\n"
            % (self.state_path, self.database))

    def write(self, name, text):
        path = os.path.join(self.state_path, name)
        mode = "wb" if isinstance(text, bytes) else "w"
        with open(path, mode) as f:
            f.write(text)
        return path

    def assertOneLine(self, prog, code, err, *fragments):
        self.assertNotIn(code, (0, common.EXIT_FAILED), err)
        self.assertNotIn("Traceback", err)
        self.assertNotIn("unexpected error", err)
        lines = err.strip().splitlines()
        self.assertEqual(1, len(lines), err)
        self.assertTrue(lines[0].startswith(prog + ": "), err)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])


class TestConfigurationFile(FaultTestCase):

    def test_binary_configuration_file(self):
        path = self.write("binary.conf", b"[cidr_allocator]\n\xe6\xff\x00")
        for main, prog, args in (
                (cli.main, "murano-cidr", ["list"]),
                (manage.main, "murano-cidr-manage", ["db", "sync"]),
                (status.main, "murano-cidr-status", ["upgrade", "check"])):
            code, out, err = self.run_main(main, "--config-file", path, *args)
            self.assertOneLine(prog, code, err, path, "not utf-8 text",
                               "0xe6")
            self.assertEqual(common.EXIT_USAGE, code)

    def test_binary_file_in_a_configuration_directory(self):
        directory = os.path.join(self.state_path, "conf.d")
        os.mkdir(directory)
        self.write("conf.d/a.conf", "[cidr_allocator]\n")
        path = self.write("conf.d/b.conf", b"[cidr_allocator]\n\xe6\xff")
        code, out, err = self.run_main(
            cli.main, "--config-file", self.conf_file, "--config-dir",
            directory, "list")
        self.assertOneLine("murano-cidr", code, err, path, "not utf-8 text",
                           "0xe6")

    def test_other_decoding_errors_stay_unexpected(self):
        error = UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid")
        self.assertIsNone(common.undecodable_config_file(error))


class TestInputFiles(FaultTestCase):

    def test_deeply_nested_json(self):
        self.assertRaises(errors.InvalidInputFile, files.parse_json,
                          "deep.json", DEEP_JSON)
        path = self.write("deep.json", DEEP_JSON)
        for args in (["import", path], ["prune", "--live-owners", path]):
            code, out, err = self.run_main(
                cli.main, "--config-file", self.conf_file, *args)
            self.assertOneLine("murano-cidr", code, err, path, "deeply")

    def test_grace_beyond_the_longest_duration(self):
        for text in ("99999999999999999999w", "1000000000d"):
            e = self.assertRaises(exceptions.InvalidArgument,
                                  pruning.parse_duration, text)
            self.assertIn("longest duration", str(e))
        self.assertEqual(999999999,
                         pruning.parse_duration("999999999d").days)
        live = self.write("live.json", '["net-1"]')
        # A usage error: argparse prints it and exits 2.
        e = self.assertRaises(
            SystemExit, self.run_main, cli.main, "--config-file",
            self.conf_file, "prune", "--live-owners", live, "--grace",
            "99999999999999999999w")
        self.assertEqual(common.EXIT_USAGE, e.code)


class TestDatabaseFaults(FaultTestCase):

    def test_file_that_is_not_a_database(self):
        self.write("murano-cidr.sqlite", "not a database " * 100)
        for main, prog, args in (
                (manage.main, "murano-cidr-manage", ["db", "sync"]),
                (cli.main, "murano-cidr", ["list"])):
            code, out, err = self.run_main(
                main, "--config-file", self.conf_file, *args)
            self.assertOneLine(prog, code, err, self.database,
                               "not a database")

    def test_sync_from_an_unknown_revision(self):
        engine = sa.create_engine("sqlite:///" + self.database)
        self.addCleanup(engine.dispose)
        migration.upgrade_engine(engine)
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE %s SET version_num = 'f00dcafe0000'"
                                 % revisions.VERSION_TABLE))
        for args in (["db", "sync"], ["db", "stamp", "head"]):
            code, out, err = self.run_main(
                manage.main, "--config-file", self.conf_file, *args)
            self.assertOneLine("murano-cidr-manage", code, err,
                               "f00dcafe0000", "upgrade murano-cidr")
        self.assertRaises(errors.UnknownRevision, migration.upgrade_engine,
                          engine)
        with engine.connect() as conn:
            self.assertEqual("f00dcafe0000", revisions.revision_of(conn))


class TestSQLiteLocation(FaultTestCase):
    """Where the SQLite file should be, and why it cannot be used."""

    def test_a_missing_directory_is_named(self):
        missing = os.path.join(self.state_path, "nonexistent", "dir")
        conf = self.write("nodir.conf", "[cidr_allocator]\ndriver = db\n"
                          "[cidr_allocator_database]\nconnection = "
                          "sqlite:///%s/x.sqlite\n" % missing)
        for main, prog, args in ((manage.main, "murano-cidr-manage",
                                  ["db", "sync"]),
                                 (cli.main, "murano-cidr", ["list"])):
            code, _out, err = self.run_main(main, "--config-file", conf,
                                            *args)
            self.assertOneLine(prog, code, err, "the directory %s does not "
                               "exist" % missing)
            self.assertEqual(common.EXIT_USAGE, code)
        self.assertFalse(os.path.exists(missing))

    def test_an_unreadable_state_directory_is_a_permission_error(self):
        locked = os.path.join(self.state_path, "locked")
        os.mkdir(locked, 0o000)
        self.addCleanup(os.chmod, locked, 0o700)
        conf = self.write("locked.conf", "[cidr_allocator]\ndriver = db\n"
                          "state_path = %s\n" % locked)
        real_access = os.access

        def access(path, mode, **kwargs):
            # root passes every permission check; this user would not.
            if os.path.abspath(path) == locked:
                return False
            return real_access(path, mode, **kwargs)

        self.useFixture(fixtures.MonkeyPatch("os.access", access))
        for args in (["list"], ["allocate", "net-1"]):
            code, _out, err = self.run_main(cli.main, "--config-file", conf,
                                            *args)
            self.assertOneLine("murano-cidr", code, err, "cannot be read",
                               "may not enter or read %s" % locked)
            self.assertNotIn("db sync", err)
            self.assertEqual(common.EXIT_READ_ONLY, code)
