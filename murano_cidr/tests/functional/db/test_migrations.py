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

"""Migrations on every backend: empty to head, and models in sync."""

import datetime

from alembic import script as alembic_script
from oslo_db.sqlalchemy import test_migrations
import sqlalchemy as sa

from murano_cidr.engine.drivers.db import allocating
from murano_cidr.engine.drivers.db import models
from murano_cidr.operator.drivers.db import migration
from murano_cidr.operator.drivers.db import revisions
from murano_cidr.tests.functional.db import base


class MigrationTests(object):

    def test_walk_every_revision_from_empty(self):
        self.assertIsNone(migration.revision_of_engine(self.engine))
        script = alembic_script.ScriptDirectory.from_config(
            revisions.alembic_configuration())
        walk = list(reversed(list(script.walk_revisions())))
        for revision in walk:
            migration.upgrade_engine(self.engine, revision.revision)
            self.assertEqual(revision.revision,
                             migration.revision_of_engine(self.engine))
        self.assertEqual(revisions.head_revision(),
                         migration.revision_of_engine(self.engine))
        tables = set(sa.inspect(self.engine).get_table_names())
        self.assertIn(revisions.VERSION_TABLE, tables)
        self.assertNotIn("alembic_version", tables)
        # Upgrading again is harmless.
        migration.upgrade_engine(self.engine)

    def test_rows_of_the_initial_schema_stay_live_allocations(self):
        migration.upgrade_engine(self.engine, "5c1b0e7f2a91")
        with self.engine.begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO murano_cidr_allocations (owner, scope, "
                "ip_version, cidr, range_first, range_last, confirmed, "
                "created_at) VALUES ('net-1', 'r', 4, '10.0.0.0/24', "
                ":first, :last, :yes, :now)"),
                {"first": allocating.address_key(0x0a000000),
                 "last": allocating.address_key(0x0a0000ff), "yes": True,
                 "now": datetime.datetime(2026, 11, 30)})
        migration.upgrade_engine(self.engine)
        driver = self.make_driver()
        self.assertEqual("10.0.0.0/24", driver.get("net-1").cidr)
        self.assertEqual([], driver.list_released())
        self.assertTrue(driver.release("net-1"))
        self.assertEqual(["10.0.0.0/24"],
                         [a.cidr for a in driver.list_released()])
        # The owner allocates again; its old CIDR is held back meanwhile.
        self.assertNotEqual("10.0.0.0/24", driver.allocate("net-1",
                                                           scope="r"))

    def test_sync_through_the_configuration(self):
        migration.upgrade(self.conf)
        self.assertEqual(revisions.head_revision(),
                         migration.current_revision(self.conf))
        driver = self.make_driver()
        self.assertIn(driver.allocate("net-1", scope="r"),
                      [str(n) for n in driver.pool()])


class ModelsSync(test_migrations.ModelsMigrationsSync):

    def get_metadata(self):
        return models.BASE.metadata

    def get_engine(self):
        return self.engine

    def db_sync(self, engine):
        migration.upgrade_engine(engine)

    def include_object(self, object_, name, type_, reflected, compare_to):
        return revisions.include_object(object_, name, type_, reflected,
                                        compare_to)


class TestSqlite(base.SqliteBackend, MigrationTests, base.DbTestCase):
    pass


class TestMySQL(base.MySQLBackend, MigrationTests, base.DbTestCase):

    def test_tables_compare_owners_exactly(self):
        migration.upgrade_engine(self.engine)
        with self.engine.connect() as conn:
            rows = conn.execute(sa.text(
                "SELECT table_name, table_collation FROM "
                "information_schema.tables WHERE table_schema = DATABASE() "
                "AND table_name LIKE 'murano_cidr_%'")).fetchall()
        self.assertEqual(3, len(rows))
        for name, collation in rows:
            if name != revisions.VERSION_TABLE:
                self.assertEqual("utf8mb4_bin", collation, name)


class TestPostgresql(base.PostgresqlBackend, MigrationTests,
                     base.DbTestCase):
    pass


class TestModelsSyncSqlite(base.SqliteBackend, ModelsSync, base.DbTestCase):
    pass


class TestModelsSyncMySQL(base.MySQLBackend, ModelsSync, base.DbTestCase):
    pass


class TestModelsSyncPostgresql(base.PostgresqlBackend, ModelsSync,
                               base.DbTestCase):
    pass
