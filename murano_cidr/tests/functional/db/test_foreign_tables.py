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

"""``db sync`` into a database that already has a ``murano_cidr_*`` table.

MySQL and MariaDB commit each ``CREATE TABLE`` at once: a sync that failed
on the second table used to leave the first (the version table) behind.
The sync must refuse before it creates anything, on every backend, and
``murano-cidr-manage`` must say so on one line.
"""

import os
import subprocess
import sys

import fixtures
import sqlalchemy as sa

from murano_cidr import exceptions
from murano_cidr.operator.drivers.db import migration
from murano_cidr.operator.drivers.db import revisions
from murano_cidr.tests.functional.db import base


class ForeignTableTests(object):

    def setUp(self):
        super().setUp()
        with self.engine.begin() as conn:
            conn.execute(sa.text("CREATE TABLE murano_cidr_scopes "
                                 "(name VARCHAR(40))"))
            conn.execute(sa.text("INSERT INTO murano_cidr_scopes "
                                 "VALUES ('theirs')"))

    def tables(self):
        return set(sa.inspect(self.engine).get_table_names())

    def test_sync_refuses_and_changes_nothing(self):
        before = self.tables()
        e = self.assertRaises(exceptions.ForeignTables, migration.upgrade,
                              self.conf)
        self.assertIn("murano_cidr_scopes", str(e))
        self.assertEqual(before, self.tables())
        self.assertNotIn(revisions.VERSION_TABLE, self.tables())
        with self.engine.connect() as conn:
            self.assertEqual([("theirs",)], [tuple(r) for r in conn.execute(
                sa.text("SELECT name FROM murano_cidr_scopes")).fetchall()])

    def test_empty_version_table_left_by_an_interrupted_sync(self):
        with self.engine.begin() as conn:
            conn.execute(sa.text("CREATE TABLE %s (version_num "
                                 "VARCHAR(32) NOT NULL)"
                                 % revisions.VERSION_TABLE))
        before = self.tables()
        self.assertRaises(exceptions.ForeignTables, migration.upgrade,
                          self.conf)
        self.assertEqual(before, self.tables())

    def test_manage_prints_one_line(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            "murano.conf")
        with open(path, "w") as f:
            f.write("[cidr_allocator_database]\nconnection = %s\n" % self.url)
        result = subprocess.run(
            [sys.executable, "-m", "murano_cidr.operator.cmd.manage",
             "--config-file", path, "db", "sync"],
            capture_output=True, text=True, timeout=120)
        self.assertEqual(2, result.returncode, result.stderr)
        lines = result.stderr.strip().splitlines()
        self.assertEqual(1, len(lines), result.stderr)
        self.assertIn("murano-cidr-manage: error:", lines[0])
        self.assertIn("murano_cidr_scopes", lines[0])
        self.assertNotIn(revisions.VERSION_TABLE, self.tables())


class TestSqlite(base.SqliteBackend, ForeignTableTests, base.DbTestCase):
    pass


class TestMySQL(base.MySQLBackend, ForeignTableTests, base.DbTestCase):
    pass


class TestPostgresql(base.PostgresqlBackend, ForeignTableTests,
                     base.DbTestCase):
    pass
