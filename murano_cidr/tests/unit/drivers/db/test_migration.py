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

"""Migrations and ``murano-cidr-manage`` on SQLite."""

import os

import fixtures
import sqlalchemy as sa

from murano_cidr.engine.drivers.db import models
from murano_cidr import exceptions
from murano_cidr import messages
from murano_cidr.operator.cmd import cli
from murano_cidr.operator.cmd import manage
from murano_cidr.operator.cmd import status
from murano_cidr.operator.drivers.db import migration
from murano_cidr.operator.drivers.db import revisions
from murano_cidr.tests import base


class TestMigration(base.TestCase):

    def setUp(self):
        super().setUp()
        db = self.use_database("sqlite", self.config_fixture)
        self.url, self.engine = db.url, db.engine

    def tables(self):
        return set(sa.inspect(self.engine).get_table_names())

    def test_upgrade_from_empty_to_head(self):
        self.assertIsNone(migration.current_revision(self.conf))
        migration.upgrade(self.conf)
        self.assertEqual(revisions.head_revision(),
                         migration.current_revision(self.conf))
        self.assertEqual({"murano_cidr_allocations", "murano_cidr_scopes",
                          revisions.VERSION_TABLE}, self.tables())
        migration.upgrade(self.conf)
        self.assertEqual(revisions.head_revision(),
                         migration.current_revision(self.conf))

    def test_shares_a_database_with_another_service(self):
        engine = self.engine
        with engine.begin() as conn:
            conn.execute(sa.text("CREATE TABLE alembic_version "
                                 "(version_num VARCHAR(32) NOT NULL)"))
            conn.execute(sa.text("INSERT INTO alembic_version "
                                 "VALUES ('theirs')"))
            conn.execute(sa.text("CREATE TABLE instances (id INTEGER)"))
        migration.upgrade(self.conf)
        with engine.connect() as conn:
            self.assertEqual("theirs", conn.execute(sa.text(
                "SELECT version_num FROM alembic_version")).scalar())
        self.assertIn("instances", self.tables())
        self.assertEqual(revisions.head_revision(),
                         migration.current_revision(self.conf))

    def test_stamp_and_unknown_revisions(self):
        # Stamping a schema that does not exist is refused (see
        # TestSchemaTools); a real one is recorded.
        e = self.assertRaises(exceptions.DatabaseNotSynced, migration.stamp,
                              self.conf, "head")
        self.assertIn("does not exist, so there is nothing to stamp head",
                      str(e))
        self.assertIn("db sync", str(e))
        self.assertIsNone(migration.current_revision(self.conf))
        migration.upgrade(self.conf)
        with self.engine.begin() as conn:
            conn.execute(sa.text("DELETE FROM %s" % revisions.VERSION_TABLE))
        migration.stamp(self.conf, "head")
        self.assertEqual(revisions.head_revision(),
                         migration.current_revision(self.conf))
        self.assertRaises(exceptions.InvalidArgument, migration.stamp,
                          self.conf, "nope")
        self.assertRaises(exceptions.InvalidArgument, migration.upgrade,
                          self.conf, "nope")

    def test_check_revision(self):
        head = revisions.head_revision()
        revisions.check_revision(head)
        self.assertRaises(exceptions.DatabaseNotSynced,
                          revisions.check_revision, None)
        # A revision this code does not know is a newer schema: accepted.
        revisions.check_revision("0123456789ab")

    def test_the_models_revision_is_the_head(self):
        # The driver checks a database against models.REVISION without
        # reading alembic's scripts: a new migration moves both.
        self.assertEqual(revisions.head_revision(), models.REVISION)
        # models.REVISIONS tells an older schema from a newer one without
        # them: every script's revision, oldest first.
        self.assertEqual(set(revisions.known_revisions()),
                         set(models.REVISIONS))
        self.assertEqual(len(revisions.known_revisions()),
                         len(models.REVISIONS))

    def test_include_object_sees_our_tables_only(self):
        self.assertTrue(revisions.include_object(
            None, "murano_cidr_scopes", "table", True, None))
        self.assertFalse(revisions.include_object(
            None, "instances", "table", True, None))
        self.assertFalse(revisions.include_object(
            None, revisions.VERSION_TABLE, "table", True, None))

    def test_unreachable_database(self):
        self.config_fixture.config(
            group="cidr_allocator_database",
            connection="mysql+pymysql://u:pw@127.0.0.1:1/x", max_retries=0)
        e = self.assertRaises(exceptions.DatabaseUnavailable,
                              migration.current_revision, self.conf)
        self.assertIn("u:***@127.0.0.1:1/x", str(e))
        self.assertEqual(
            "mysql+pymysql://u:***@127.0.0.1:1/x",
            messages.safe_url("mysql+pymysql://u:pw@127.0.0.1:1/x"))


class ManageTestCase(base.TestCase):
    """``murano-cidr-manage`` with a configuration file of the test's."""

    def setUp(self):
        super().setUp()
        self.conf_file = os.path.join(self.state_path, "murano.conf")
        with open(self.conf_file, "w") as f:
            f.write("[cidr_allocator]\nstate_path = %s\n" % self.state_path)

    def manage(self, *args):
        return self.run_main(manage.main, "--config-file", self.conf_file,
                             *args)


class TestManage(ManageTestCase):

    def test_sync_version_stamp(self):
        code, out, err = self.manage("db", "version")
        self.assertEqual((0, "None\n"), (code, out))
        code, out, err = self.manage("db", "sync")
        self.assertEqual(0, code)
        self.assertIn(revisions.head_revision() + " (head)", out)
        self.assertIn(os.path.join(self.state_path, "murano-cidr.sqlite"),
                      out)
        code, out, err = self.manage("db", "version")
        self.assertEqual((0, revisions.head_revision() + "\n"), (code, out))
        code, out, err = self.manage("db", "stamp", "head")
        self.assertEqual(0, code)

    def test_stamp_creates_no_missing_sqlite_file(self):
        # Issue 32: it said "nothing was changed" and left an empty file.
        path = os.path.join(self.state_path, "murano-cidr.sqlite")
        for revision in ("head", "base"):
            code, out, err = self.manage("db", "stamp", revision)
            self.assertFalse(os.path.exists(path), (revision, err))
        code, out, err = self.manage("db", "stamp", "head")
        self.assertEqual(2, code)
        # Issue 32: it blamed missing tables of a file that does not exist.
        self.assertIn("the SQLite file %s does not exist, so there is "
                      "nothing to stamp head" % path, err)
        self.assertIn("nothing was created); run 'murano-cidr-manage ", err)
        self.assertEqual([], [name for name in os.listdir(self.state_path)
                              if name.startswith("murano-cidr.sqlite")])

    def test_errors_are_one_line(self):
        code, out, err = self.manage("db", "stamp", "nope")
        self.assertEqual(2, code)
        self.assertEqual(1, len(err.strip().splitlines()))
        self.assertIn("murano-cidr-manage: error: Invalid revision", err)
        with open(self.conf_file, "a") as f:
            f.write("[cidr_allocator_database]\n"
                    "connection = postgresql+psycopg2://u:pw@127.0.0.1:1/x\n"
                    "db_max_retries = 0\n"
                    # NOTE: no wait for the server, which logs a line
                    # first. oslo.db only sees libpq 13's wording (Xena's
                    # psycopg2) as a connection error and waits.
                    "max_retries = 0\n")
        code, out, err = self.manage("db", "sync")
        self.assertEqual(3, code)
        self.assertEqual(1, len(err.strip().splitlines()))
        self.assertNotIn("pw", err.replace("postgresql", ""))


class TestSchemaTools(ManageTestCase):
    """The schema commands never leave tables and revision apart."""

    def setUp(self):
        super().setUp()
        with open(self.conf_file, "a") as f:
            f.write("driver = db\n")
        self.assertEqual(0, self.manage("db", "sync")[0])
        self.assertEqual(0, self.run_main(
            cli.main, "--config-file", self.conf_file, "allocate", "net-1",
            "--scope", "r1")[0])

    def listed(self):
        code, out, err = self.run_main(cli.main, "--config-file",
                                       self.conf_file, "list")
        self.assertEqual(0, code, err)
        return out

    def test_stamp_base_and_sync_base_are_refused(self):
        head = revisions.head_revision()
        before = self.listed()
        self.assertIn("net-1", before)
        code, out, err = self.manage("db", "stamp", "base")
        self.assertEqual(2, code)
        self.assertIn("has the murano-cidr tables murano_cidr_allocations, "
                      "murano_cidr_scopes: stamping base would leave them "
                      "without a recorded revision", err)
        self.assertIn("Nothing was changed", err)
        code, out, err = self.manage("db", "sync", "base")
        self.assertEqual(2, code)
        self.assertIn("db sync only goes forward", err)
        self.assertEqual((0, head + "\n"), self.manage("db", "version")[:2])
        self.assertEqual(before, self.listed())

    def test_tables_without_a_revision_every_tool_agrees(self):
        # What an earlier release's 'db stamp base' left behind.
        engine = sa.create_engine(
            "sqlite:///" + os.path.join(self.state_path, "murano-cidr.sqlite"))
        self.addCleanup(engine.dispose)
        with engine.begin() as conn:
            conn.execute(sa.text("DELETE FROM %s" % revisions.VERSION_TABLE))
        # The hint repeats the configuration the command was given.
        way_out = "record it with 'murano-cidr-manage --config-file %s " \
            "db stamp head'" % self.conf_file
        tables = "murano_cidr_allocations, murano_cidr_scopes"
        for main, args, code in ((cli.main, ["list"], 2),
                                 (manage.main, ["db", "sync"], 2),
                                 (status.main, ["upgrade", "check"], 2)):
            got, out, err = self.run_main(main, "--config-file",
                                          self.conf_file, *args)
            self.assertEqual(code, got, (args, out, err))
            text = " ".join((out + err).split()).replace("| ", "")
            self.assertIn(way_out, text, args)
            self.assertIn(tables, text, args)
            self.assertNotIn("do not exist", text, args)
        self.assertEqual(0, self.manage("db", "stamp", "head")[0])
        self.assertIn("net-1", self.listed())


class TestReadingCommandsWriteNothing(base.TestCase):
    """``db version`` and the status check on a home without state."""

    def setUp(self):
        super().setUp()
        self.home = self.useFixture(fixtures.TempDir()).path
        self.useFixture(fixtures.EnvironmentVariable("HOME", self.home))
        self.useFixture(fixtures.EnvironmentVariable("XDG_STATE_HOME"))
        self.conf_file = os.path.join(self.home, "murano.conf")
        with open(self.conf_file, "w") as f:
            # The default's value, read under this test's $HOME (the
            # default itself was computed when opts was imported).
            f.write("[cidr_allocator]\ndriver = db\n"
                    "state_path = ~/.local/state/murano-cidr\n")

    def assertNothingWritten(self):
        self.assertEqual(["murano.conf"], sorted(
            name for name in os.listdir(self.home) if name != ".cache"))

    def test_db_version(self):
        code, out, err = self.run_main(manage.main, "--config-file",
                                       self.conf_file, "db", "version")
        self.assertEqual((0, "None\n"), (code, out), err)
        self.assertNothingWritten()

    def test_upgrade_check(self):
        code, out, err = self.run_main(status.main, "--config-file",
                                       self.conf_file, "upgrade", "check")
        self.assertEqual(2, code, err)
        self.assertIn("has no murano-cidr tables", out)
        self.assertNothingWritten()

    def test_list(self):
        code, out, err = self.run_main(cli.main, "--config-file",
                                       self.conf_file, "list")
        self.assertEqual(2, code, err)
        self.assertIn("does not exist yet", err)
        self.assertIn("db sync", err)
        self.assertNothingWritten()

    def test_db_sync_creates_them(self):
        code, out, err = self.run_main(manage.main, "--config-file",
                                       self.conf_file, "db", "sync")
        self.assertEqual(0, code, err)
        path = os.path.join(self.home, ".local", "state", "murano-cidr")
        self.assertEqual(0o700, os.stat(path).st_mode & 0o777)
        self.assertTrue(os.path.exists(os.path.join(path,
                                                    "murano-cidr.sqlite")))
