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

"""Every statement the db driver issues is answered from an index.

The driver's operations run on scopes of 3,000 allocations (packed, and
random), among 2,000 other scopes of 20; every statement they send is
recorded (``before_cursor_execute``) and given to the server's ``EXPLAIN``
(MariaDB's estimate; PostgreSQL's ``EXPLAIN ANALYZE``, rolled back). Each
access to the driver's tables must use an index, and the statements of an
allocation, a confirm, a release and a lookup must read a bounded number
of rows; only a full read of a scope (a process's first allocation
there, or before it calls the pool exhausted) and the usage count read
the whole scope (by index).
"""

import datetime
import json
import random

import sqlalchemy as sa

from murano_cidr.engine import allocation as allocation_mod
from murano_cidr.engine.drivers.db import allocating
from murano_cidr.tests.functional.db import base

TABLES = ("murano_cidr_allocations", "murano_cidr_scopes")

#: Other scopes in the tables, and rows in each.
FILLER_SCOPES = 2000
FILLER_ROWS = 20

#: Rows an index access of a bounded statement may read.
BOUND = 2 * allocating.WINDOW


class ExplainTests(object):

    pool_settings = dict(base.DbTestCase.pool_settings,
                         pool_cidrs=["10.0.0.0/12"])

    def setUp(self):
        super().setUp()
        self.sync()
        self.driver = self.make_driver()
        pool = self.driver.pool()
        rng = random.Random(1502437)
        for scope, indices in (
                ("packed", range(3000)),
                ("random", rng.sample(range(pool.size), 3000))):
            self.driver.import_allocations(
                [allocation_mod.Allocation(owner="%s-%d" % (scope, i),
                                           cidr=pool.cidr(i), scope=scope)
                 for i in indices])
        with self.engine.begin() as conn:
            # Other scopes, as in a cloud's database: one scope's rows are
            # few among the table's, and a planner weighs that.
            conn.execute(sa.insert(allocating.SCOPES), [
                {"scope": "router-%d" % i, "generation": 1}
                for i in range(FILLER_SCOPES)])
            conn.execute(sa.insert(allocating.ALLOCATIONS), [
                allocating.row_values("router-%d-%d" % (i, j), "router-%d" % i,
                                      4, pool[j], True,
                                      datetime.datetime(2026, 12, 1))
                for i in range(FILLER_SCOPES) for j in range(FILLER_ROWS)])
            for table in TABLES:
                conn.execute(sa.text(self.analyze_sql % table))
        self.statements = []

    def record(self, driver, func, *args, **kwargs):
        """Run ``func`` and keep the statements it sent."""
        sent = []

        def listener(conn, cursor, statement, parameters, context, many):
            sent.append((statement, parameters))

        engine = driver.database.engine
        sa.event.listen(engine, "before_cursor_execute", listener)
        try:
            func(*args, **kwargs)
        finally:
            sa.event.remove(engine, "before_cursor_execute", listener)
        return [s for s in sent if any(t in s[0] for t in TABLES)]

    def test_every_statement_uses_an_index(self):
        stale = self.make_driver()
        bounded = []
        whole_scope = []
        for scope in ("packed", "random"):
            # The first allocation of a process in a scope reads it once.
            whole_scope += self.record(stale, stale.allocate, "first-" +
                                       scope, scope=scope)
            self.driver.allocate("warm-up-" + scope, scope=scope)
            bounded += self.record(self.driver, self.driver.allocate,
                                   "warm-" + scope, scope=scope)
            # Another engine's rows: the stale summary misses, reads a
            # window, draws again.
            for i in range(30):
                self.driver.allocate("other-%s-%d" % (scope, i), scope=scope)
            for i in range(10):
                bounded += self.record(stale, stale.allocate,
                                       "stale-%s-%d" % (scope, i),
                                       scope=scope)
            bounded += self.record(stale, stale.allocate, "warm-" + scope,
                                   scope=scope)
            bounded += self.record(stale, stale.confirm, "warm-" + scope)
            bounded += self.record(stale, stale.get, "warm-" + scope)
            bounded += self.record(stale, stale.release, "warm-" + scope)
            whole_scope += self.record(stale, stale.usage, scope)
        bounded += self.record(stale, stale.allocate, "no-scope")
        # A new engine's first allocation also frees the released rows
        # whose subnets are off the router, past the grace period.
        self.config(release_grace=0)
        fresh = self.make_driver()
        whole_scope += self.record(fresh, fresh.allocate, "fresh",
                                   scope="packed")
        kinds = {s.split(None, 1)[0].upper() for s, _p in bounded}
        self.assertEqual({"UPDATE", "INSERT", "SELECT"}, kinds)
        self.assertIn("DELETE", {s.split(None, 1)[0].upper()
                                 for s, _p in whole_scope})
        self.assertIn("read_window", str(self._window_reads(bounded)))
        for statement, parameters in bounded:
            self.assertIndexed(statement, parameters, BOUND)
        for statement, parameters in whole_scope:
            self.assertIndexed(statement, parameters, None)

    def _window_reads(self, statements):
        # A window read is the only UNION the driver sends.
        return ["read_window" for s, _p in statements if "UNION ALL" in s]

    def explain(self, statement, parameters):
        with self.engine.connect() as conn, conn.begin() as transaction:
            # Rolled back: PostgreSQL's EXPLAIN ANALYZE runs the statement.
            # NOTE: the driver's own text and parameters (exec_driver_sql
            # from SQLAlchemy 1.4 on; 1.3's execute takes them).
            run = getattr(conn, "exec_driver_sql", conn.execute)
            result = run(self.explain_sql + statement, parameters).fetchall()
            transaction.rollback()
            return result


class TestMySQL(base.MySQLBackend, ExplainTests, base.DbTestCase):
    analyze_sql = "ANALYZE TABLE %s"
    explain_sql = "EXPLAIN "

    def assertIndexed(self, statement, parameters, bound):
        for row in self.explain(statement, parameters):
            row = getattr(row, "_mapping", row)
            # The row an INSERT writes, not a read (a plain INSERT has
            # nothing else).
            if row["table"] not in TABLES or row["select_type"] == "INSERT":
                continue
            where = "%s\n%s\n%s" % (statement, parameters, dict(row))
            self.assertIsNotNone(row["key"], where)
            self.assertNotIn(row["type"], ("ALL", "index"), where)
            if bound is not None:
                self.assertLessEqual(int(row["rows"]), bound, where)


class TestPostgresql(base.PostgresqlBackend, ExplainTests, base.DbTestCase):
    analyze_sql = "ANALYZE %s"
    # NOTE: the rows it read, not the planner's guess: PostgreSQL estimates
    # more than one row for an equality on a unique key.
    explain_sql = "EXPLAIN (ANALYZE, FORMAT JSON) "

    def assertIndexed(self, statement, parameters, bound):
        plan = self.explain(statement, parameters)[0][0]
        if isinstance(plan, str):
            plan = json.loads(plan)
        nodes = [plan[0]["Plan"]]
        while nodes:
            node = nodes.pop()
            nodes.extend(node.get("Plans", ()))
            if (node.get("Relation Name") not in TABLES
                    or node["Node Type"] == "ModifyTable"):
                continue
            where = "%s\n%s" % (statement, node)
            self.assertIn(node["Node Type"],
                          ("Index Scan", "Index Only Scan",
                           "Bitmap Heap Scan"), where)
            if node["Node Type"] == "Bitmap Heap Scan":
                self.assertEqual(["Bitmap Index Scan"],
                                 [n["Node Type"] for n in node["Plans"]],
                                 where)
            if bound is not None:
                self.assertLessEqual(
                    node["Actual Rows"] * node["Actual Loops"], bound, where)
