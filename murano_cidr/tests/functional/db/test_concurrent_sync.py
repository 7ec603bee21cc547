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

"""Two ``murano-cidr-manage db sync`` at once: both succeed, one migrates.

Two engines upgraded together run ``db sync`` together. Each worker is a
process of its own running the command's ``main`` against the test's
database; they start at a barrier.
"""

import contextlib
import io
import os

import fixtures
import sqlalchemy as sa

from murano_cidr import exceptions
from murano_cidr.operator.cmd import manage
from murano_cidr.operator.drivers.db import migration
from murano_cidr.operator.drivers.db import revisions
from murano_cidr.operator.drivers.db import synclock
from murano_cidr.tests.functional.db import base


def sync_worker(conf_file, barrier, results):
    """Run ``db sync`` after the barrier; report its exit code and output."""
    err = io.StringIO()
    barrier.wait()
    with contextlib.redirect_stderr(err), \
            contextlib.redirect_stdout(io.StringIO()):
        code = manage.main(["--config-file", conf_file, "db", "sync"])
    results.put((code, err.getvalue()))


class ConcurrentSyncTests(object):

    #: Processes running db sync at once.
    processes = 2

    def test_two_syncs_at_once(self):
        conf_file = os.path.join(self.state_path, "murano.conf")
        with open(conf_file, "w") as f:
            f.write("[cidr_allocator_database]\nconnection = %s\n"
                    "max_retries = 0\n" % self.url)
        for attempt in range(3):
            # A few rounds: each must end with both at exit 0.
            if attempt:
                with self.engine.begin() as conn:
                    for table in reversed(sa.inspect(
                            conn).get_table_names()):
                        conn.execute(sa.text("DROP TABLE %s" % table))
            outcomes = self.run_workers(
                sync_worker, [(conf_file,)] * self.processes)
            self.assertEqual([(0, "")] * self.processes, outcomes)
            self.assertEqual(revisions.head_revision(),
                             migration.revision_of_engine(self.engine))
            with self.engine.connect() as conn:
                self.assertEqual(1, conn.execute(sa.text(
                    "SELECT COUNT(*) FROM %s" % revisions.VERSION_TABLE)
                ).scalar())
        driver = self.make_driver()
        self.assertTrue(driver.allocate("net-1", scope="r"))

    def test_a_sync_that_waits_too_long_says_so(self):
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.operator.drivers.db.synclock.TIMEOUT", 1))
        with self.engine.connect() as holder:
            # Another db sync, stuck while it holds the lock.
            self.take(holder)
            e = self.assertRaises(exceptions.DatabaseUnavailable,
                                  migration.upgrade, self.conf)
        self.assertIn("another 'db sync' held the schema lock for more "
                      "than 1 seconds; nothing was changed", str(e))
        self.assertIsNone(migration.revision_of_engine(self.engine))
        migration.upgrade(self.conf)
        self.assertEqual(revisions.head_revision(),
                         migration.revision_of_engine(self.engine))


class TestMySQL(base.MySQLBackend, ConcurrentSyncTests, base.DbTestCase):

    @staticmethod
    def take(connection):
        connection.execute(sa.text(
            "SELECT GET_LOCK(CONCAT('murano_cidr_sync.', DATABASE()), 0)"))


class TestPostgresql(base.PostgresqlBackend, ConcurrentSyncTests,
                     base.DbTestCase):

    @staticmethod
    def take(connection):
        connection.execute(sa.text("SELECT pg_advisory_lock(:key)"),
                           {"key": synclock.PG_KEY})
