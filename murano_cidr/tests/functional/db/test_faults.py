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

"""The server kills the connection in the middle of a transaction."""

import fixtures
import sqlalchemy as sa

from murano_cidr.engine import allocation as allocation_mod
from murano_cidr.engine.drivers.db import allocating
from murano_cidr.engine.drivers.db import compat
from murano_cidr import exceptions
from murano_cidr.operator.drivers.db import bulk_import
from murano_cidr.tests.functional.db import base


class FaultTests(object):
    """The allocation is retried, or fails cleanly; never half-written."""

    def setUp(self):
        super().setUp()
        self.sync()
        self.db_config(db_max_retries=3)
        self.driver = self.make_driver()
        self.kills = 0

    def kill(self, conn):
        """Have the server kill the connection ``conn`` uses."""
        pid = conn.execute(sa.text(self.own_id_sql)).scalar()
        with self.engine.connect() as admin:
            admin.execute(sa.text(self.kill_sql % int(pid)))
        self.kills += 1

    def kill_after(self, name, times, module=allocating):
        """Kill the connection right after ``module.<name>``, ``times``."""
        real = getattr(module, name)

        def wrapper(conn, *args, **kwargs):
            result = real(conn, *args, **kwargs)
            if self.kills < times:
                self.kill(conn)
            return result

        self.useFixture(fixtures.MonkeyPatch(
            "%s.%s" % (module.__name__, name), wrapper))

    def rows(self):
        with self.engine.connect() as conn:
            return conn.execute(compat.select(allocating.ALLOCATIONS.c.owner,
                                              allocating.ALLOCATIONS.c.cidr)
                                ).fetchall()

    def test_killed_after_the_insert_is_retried(self):
        self.kill_after("insert_if_free", 1)
        cidr = self.driver.allocate("net-1", scope="r")
        self.assertEqual(1, self.kills)
        self.assertEqual([("net-1", cidr)], self.rows())
        self.assertEqual(cidr, self.driver.allocate("net-1", scope="r"))

    def test_killed_after_the_insert_beside_another_engine_is_retried(self):
        self.driver.allocate("net-0", scope="r")
        self.make_driver().allocate("other", scope="r")
        self.kill_after("insert_if_free", 1)
        cidr = self.driver.allocate("net-1", scope="r")
        self.assertEqual(1, self.kills)
        self.assertEqual(cidr, self.driver.get("net-1").cidr)
        self.assertEqual(3, len(self.rows()))

    def test_killed_holding_the_scope_lock_is_retried(self):
        self.driver.allocate("net-0", scope="r")
        self.kill_after("lock_scope", 1)
        # A callable taken is read once the scope is locked, always by
        # lock_scope.
        cidr = self.driver.allocate("net-1", scope="r", taken=list)
        self.assertEqual(1, self.kills)
        self.assertEqual(2, len(self.rows()))
        self.assertEqual(cidr, self.driver.get("net-1").cidr)

    def test_killed_while_idle_in_the_pool_is_retried(self):
        # No ping when a pooled connection is checked out: a connection the
        # server dropped while idle fails at the first statement, and the
        # transaction is retried on a new one.
        self.db_config(max_pool_size=1)
        driver = self.make_driver()
        driver.allocate("net-0", scope="r")
        with driver.database.engine.connect() as conn, conn.begin():
            pid = conn.execute(sa.text(self.own_id_sql)).scalar()
        with self.engine.connect() as admin:
            admin.execute(sa.text(self.kill_sql % int(pid)))
        cidr = driver.allocate("net-1", scope="r")
        self.assertEqual(cidr, driver.get("net-1").cidr)
        self.assertEqual(2, len(self.rows()))

    def test_killed_every_time_fails_cleanly(self):
        self.kill_after("lock_scope", 100)
        e = self.assertRaises(exceptions.DatabaseUnavailable,
                              self.driver.allocate, "net-1", scope="r")
        self.assertEqual(4, self.kills)
        self.assertIn(":***@", str(e))
        self.assertNotIn(":%s@" % self.engine.url.password, str(e))
        self.assertEqual([], self.rows())
        # The driver recovers once the server lets it.
        self.kills = 100
        self.assertIsNotNone(self.driver.allocate("net-1", scope="r"))

    def test_killed_during_an_import_writes_all_or_nothing(self):
        self.kill_after("insert", 1, module=bulk_import)
        batch = [allocation_mod.Allocation(owner="n%d" % i,
                                           cidr="10.0.%d.0/24" % i,
                                           scope="r")
                 for i in range(5)]
        self.assertEqual(5, len(self.driver.import_allocations(batch)))
        self.assertEqual(1, self.kills)
        self.assertEqual(5, len(self.rows()))


class TestMySQL(base.MySQLBackend, FaultTests, base.DbTestCase):
    own_id_sql = "SELECT CONNECTION_ID()"
    kill_sql = "KILL %d"


class TestPostgresql(base.PostgresqlBackend, FaultTests, base.DbTestCase):
    own_id_sql = "SELECT pg_backend_pid()"
    kill_sql = "SELECT pg_terminate_backend(%d)"
