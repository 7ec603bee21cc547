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

"""The db driver's fast path against other engines, rollbacks and imports.

An engine whose summary of a scope is current inserts without checking
the scope's rows (see :mod:`murano_cidr.drivers.db.search`). These tests
put between two of its allocations whatever must make the summary stale:
an engine of another geometry or pool, a transaction that failed after
its insert, an import, a ``release_scope``. Each then fills the scope from
the first engine and checks that no two CIDRs overlap and that the pool
is exhausted only once every address of it is used.

A mixin for a test case with ``make_driver(**overrides)`` and
``db_config(**options)`` on a migrated database, run on SQLite by the unit
tests and on MySQL and PostgreSQL by the functional ones.
"""

import sqlite3
from unittest import mock

import fixtures
import netaddr
from oslo_db import exception as db_exc
import sqlalchemy as sa

from murano_cidr import allocation as allocation_mod
from murano_cidr.drivers.db import queries
from murano_cidr import exceptions

#: 16 /24s, 8 /23s or 4 /22s.
POOL = "10.20.0.0/20"
SCOPE = "r"


class FastPathTests(object):

    def allocator(self, prefixlen=24, pool=(POOL,), **overrides):
        """A db driver of one geometry on the test's database."""
        return self.make_driver(pool_cidrs=list(pool),
                                subnet_prefixlen=prefixlen, **overrides)

    def fill(self, driver, name, scope=SCOPE, **kwargs):
        """Allocate from ``driver`` until its pool is exhausted."""
        got = []
        for i in range(driver.pool().size + 1):
            try:
                got.append(driver.allocate("%s-%s-%d" % (scope, name, i),
                                           scope=scope,
                                           **kwargs))
            except exceptions.PoolExhausted:
                return got
        self.fail("%s was never exhausted: %s" % (name, got))

    def assertScopeFull(self, driver, scope=SCOPE, pool=POOL):
        """No two CIDRs of ``scope`` overlap, and they cover ``pool``."""
        rows = driver.list(scope) + driver.list_released(scope)
        held = sorted(netaddr.IPNetwork(a.cidr) for a in rows)
        for a, b in zip(held, held[1:]):
            self.assertLess(a.last, b.first, "%s overlaps %s" % (a, b))
        self.assertEqual(netaddr.IPSet([pool]), netaddr.IPSet(held) &
                         netaddr.IPSet([pool]))
        return held

    def warm(self, driver, name="warm-up", scope=SCOPE):
        """The first allocation of ``driver``: its summary is current."""
        if scope != SCOPE:
            name = "%s-%s" % (scope, name)
        cidr = driver.allocate(name, scope=scope)
        self.assertIsNotNone(driver._summaries.get(scope, driver.pool())
                             .generation)
        return cidr

    def assertSettledAtMost(self, driver, scope):
        """The summary is current at no generation the scope never had."""
        summary = driver._summaries.get(scope, driver.pool())
        generation = driver.database.read(
            lambda conn: conn.execute(sa.select(
                queries.SCOPES.c.generation).where(
                    queries.SCOPES.c.scope == scope)).scalar())
        if summary is not None and summary.generation is not None:
            self.assertLessEqual(summary.generation, generation)

    def break_commit(self, driver, dbapi_connection):
        """Make this commit fail, the transaction rolled back.

        The functional tests have the server kill the connection instead.
        """
        dbapi_connection.rollback()
        # NOTE: an error of the DBAPI, which every oslo.db release
        # translates the same way (Xena's turns an oslo.db exception
        # raised here into a bare DBError): SQLite's busy file, retried.
        raise sqlite3.OperationalError("database is locked")

    def fail_commits(self, driver, times=1):
        """Fail the next ``times`` commits of ``driver``; count them."""
        dialect = driver.database.engine.dialect
        real = dialect.do_commit
        failed = []

        def do_commit(dbapi_connection):
            if len(failed) < times:
                failed.append(True)
                self.break_commit(driver, dbapi_connection)
            return real(dbapi_connection)

        patcher = mock.patch.object(dialect, "do_commit", do_commit)
        patcher.start()
        self.addCleanup(patcher.stop)
        return failed

    def fail_after(self, name, times=1):
        """Raise a deadlock right after ``queries.<name>``, ``times``."""
        real = getattr(queries, name)
        failed = []

        def wrapper(*args, **kwargs):
            result = real(*args, **kwargs)
            if len(failed) < times:
                failed.append(True)
                raise db_exc.DBDeadlock(RuntimeError("injected after " + name))
            return result

        self.useFixture(fixtures.MonkeyPatch(
            "murano_cidr.drivers.db.queries." + name, wrapper))
        return failed

    # -- another geometry, another pool ------------------------------------

    def test_another_geometry_between_allocations(self):
        for prefixlen in (23, 22):
            scope = "r%d" % prefixlen
            mine, other = self.allocator(24), self.allocator(prefixlen)
            self.warm(mine, scope=scope)
            other.allocate(scope + "-other", scope=scope)
            self.fill(mine, "mine", scope=scope)
            self.assertScopeFull(mine, scope=scope)

    def test_engines_of_two_geometries_take_turns(self):
        mine, other = self.allocator(24), self.allocator(22)
        self.warm(mine)
        for i in range(16):
            for name, driver in (("mine", mine), ("other", other)):
                try:
                    driver.allocate("%s-%d" % (name, i), scope=SCOPE)
                except exceptions.PoolExhausted:
                    pass
        self.assertEqual([], self.fill(mine, "late"))
        held = self.assertScopeFull(mine)
        self.assertIn(22, {n.prefixlen for n in held})

    def test_another_pool_holding_the_whole_pool(self):
        # The other engine's only candidate starts before this engine's
        # pool and contains it all.
        mine = self.allocator(24, pool=("10.20.8.0/21", "10.30.0.0/24"))
        other = self.allocator(20, pool=("10.20.0.0/20",))
        self.assertEqual("10.30.0.0/24", mine.allocate(
            "warm-up", scope=SCOPE, taken=["10.20.8.0/21"]))
        self.assertEqual("10.20.0.0/20", other.allocate("other",
                                                        scope=SCOPE))
        self.assertEqual([], self.fill(mine, "mine"))
        self.assertEqual(2, len(self.assertScopeFull(mine)))

    # -- a transaction that failed after its insert ------------------------

    def test_a_commit_that_failed_is_not_trusted(self):
        # The locking insert of a current summary; the unique-keys insert
        # of a summary current after a lock alone (a callable taken).
        for scope, taken in (("r-static", ()), ("r-callable", list)):
            self.db_config(db_max_retries=0)
            mine = self.allocator(24)
            self.db_config(db_max_retries=3)
            other = self.allocator(22)
            self.warm(mine, scope=scope)
            failed = self.fail_commits(mine)
            self.assertRaises(exceptions.DatabaseUnavailable, mine.allocate,
                              scope + "-lost", scope=scope, taken=taken)
            self.assertEqual([True], failed)
            self.assertIsNone(mine.get(scope + "-lost"))
            self.assertSettledAtMost(mine, scope)
            other.allocate(scope + "-other", scope=scope)
            self.fill(mine, "mine", scope=scope, taken=taken)
            self.assertScopeFull(mine, scope=scope)

    def test_a_commit_that_failed_is_retried(self):
        self.db_config(db_max_retries=3)
        mine, other = self.allocator(24), self.allocator(22)
        self.warm(mine)
        failed = self.fail_commits(mine)
        cidr = mine.allocate("net-1", scope=SCOPE)
        self.assertEqual([True], failed)
        self.assertSettledAtMost(mine, SCOPE)
        other.allocate("other", scope=SCOPE)
        self.assertEqual(cidr, mine.allocate("net-1", scope=SCOPE))
        # The candidate of the failed attempt is found again.
        self.fill(mine, "mine")
        self.assertScopeFull(mine)

    def test_a_failure_after_the_insert_is_retried(self):
        self.db_config(db_max_retries=3)
        # The locking insert of a current summary; the unique-keys insert
        # of a summary current after a lock alone (a callable taken).
        for name, taken in (("lock_and_insert", ()),
                            ("insert_unless_taken", list)):
            scope = "r-" + name
            mine, other = self.allocator(24), self.allocator(23)
            self.warm(mine, scope=scope)
            failed = self.fail_after(name)
            cidr = mine.allocate(scope + "-net", scope=scope, taken=taken)
            self.assertEqual([True], failed)
            self.assertSettledAtMost(mine, scope)
            other.allocate(scope + "-other", scope=scope)
            self.assertEqual(cidr, mine.get(scope + "-net").cidr)
            self.fill(mine, "mine", scope=scope, taken=taken)
            self.assertScopeFull(mine, scope=scope)

    # -- import, release_scope, an owner that holds a CIDR ------------------

    def test_imports_between_allocations(self):
        mine, other = self.allocator(24), self.allocator(24)
        first = netaddr.IPNetwork(self.warm(mine))
        free = [n for n in netaddr.IPNetwork(POOL).subnet(23)
                if first not in n]
        for driver, network in ((mine, free[0]), (other, free[1])):
            driver.import_allocations([allocation_mod.Allocation(
                owner="imported-%s" % network, cidr=str(network),
                scope=SCOPE, ip_version=4)])
            mine.allocate("after-%s" % network, scope=SCOPE,
                          taken=[str(free[1])])
        self.fill(mine, "mine")
        held = self.assertScopeFull(mine)
        self.assertLessEqual({free[0], free[1]}, set(held))

    def test_release_scope_between_allocations(self):
        mine, other = self.allocator(24), self.allocator(22)
        for releaser in (other, mine):
            self.warm(mine)
            self.fill(mine, "before")
            self.assertEqual(16, releaser.release_scope(SCOPE))
            other.allocate("other", scope=SCOPE)
            # Every CIDR the scope held before is found free again.
            self.assertEqual(12, len(self.fill(mine, "mine")))
            self.assertScopeFull(mine)
            releaser.release_scope(SCOPE)

    def test_an_owner_holding_a_cidr_on_the_fast_path(self):
        mine, other = self.allocator(24), self.allocator(23)
        cidr = self.warm(mine)
        checked = []
        real = queries.insert_if_free
        self.useFixture(fixtures.MonkeyPatch(
            "murano_cidr.drivers.db.queries.insert_if_free",
            lambda *args: checked.append(True) or real(*args)))
        # Refused by the unique owner; the summary stays current.
        self.assertEqual(cidr, mine.allocate("warm-up", scope=SCOPE))
        mine.allocate("net-1", scope=SCOPE)
        self.assertEqual([], checked)
        mine.allocate("elsewhere", scope="r2")
        self.assertRaises(exceptions.OwnerConflict, mine.allocate,
                          "elsewhere", scope=SCOPE)
        mine.allocate("net-2", scope=SCOPE)
        self.assertEqual([], checked)
        # An owner another engine gave a CIDR since.
        held = other.allocate("theirs", scope=SCOPE)
        self.assertEqual(held, mine.allocate("theirs", scope=SCOPE))
        self.fill(mine, "mine")
        sizes = [n.prefixlen for n in self.assertScopeFull(mine)]
        self.assertEqual((14, 1), (sizes.count(24), sizes.count(23)))

    # -- transactions of one process settling out of order -----------------

    def test_a_transaction_that_locked_before_the_last_one_settled(self):
        # Threads of one engine: B locks the scope once A has committed but
        # before A has settled the summary, so B finds it stale and checks
        # its insert; once both have settled, the summary is current again.
        mine, other = self.allocator(24), self.allocator(23)
        self.warm(mine)
        summaries = mine._summaries
        real_settle = summaries.settle
        late = []

        def settle(*args, **kwargs):
            if not late:
                late.append("b")
                mine.allocate("b", scope=SCOPE)
            return real_settle(*args, **kwargs)

        checked = []
        real_insert = queries.insert_if_free
        self.useFixture(fixtures.MonkeyPatch(
            "murano_cidr.drivers.db.queries.insert_if_free",
            lambda *args: checked.append(True) or real_insert(*args)))
        with mock.patch.object(summaries, "settle", settle):
            mine.allocate("a", scope=SCOPE)
        self.assertEqual([True], checked)
        mine.allocate("c", scope=SCOPE)
        self.assertEqual([True], checked)
        self.assertSettledAtMost(mine, SCOPE)
        # Another engine's allocation is never settled for this one.
        other.allocate("theirs", scope=SCOPE)
        for owner in ("d", "e"):
            before = len(checked)
            mine.allocate(owner, scope=SCOPE)
            self.assertGreater(len(checked), before)
        self.fill(mine, "mine")
        self.assertScopeFull(mine)
