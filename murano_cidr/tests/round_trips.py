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

"""What one allocation and one confirm send their database.

A mixin for a test case with ``make_driver()`` on a migrated database,
run on SQLite by the unit tests and on MySQL and PostgreSQL by the
functional ones.
"""

from unittest import mock

import sqlalchemy as sa

from murano_cidr.measuring.bench import counting

#: SQLAlchemy 2 sends oslo.db's ping on the DBAPI cursor, where no
#: statement event sees it (counted as a call instead).
SQLALCHEMY_2 = not sa.__version__.startswith(("0.", "1."))

#: The statements of an allocation in a scope: the scope row's lock,
#: then the insert, which the database checks against the owner's row and
#: every row of the scope, whatever this process remembers.
ALLOCATE = {"postgresql": ["UPDATE", "INSERT"],
            "mysql": ["UPDATE", "INSERT"],
            "sqlite": ["UPDATE", "INSERT"]}
CONFIRM = ["UPDATE"]
#: Each transaction pays oslo.db's ping at checkout, first (a statement
#: on SQLAlchemy 1.4, a call on 2), and a reset ROLLBACK at check-in: the
#: pool is oslo.db's (see murano_cidr.engine.drivers.db.connection). SQLite's
#: writers are not checked out (see
#: murano_cidr.engine.drivers.db.sqlite).
PING = [] if SQLALCHEMY_2 else ["SELECT"]
RESETS = 1


class RoundTripTests(object):

    def setUp(self):
        super().setUp()
        self.driver = self.make_driver(pool_cidrs=["10.0.0.0/16"])
        # The first operations check the schema and create the scope.
        self.driver.allocate("warm-up", scope="r")
        self.driver.confirm("warm-up")

    def expected(self, writes=0, reads=0):
        """The calls and connections of that many transactions."""
        # oslo.db gives an SQLite file no pool: a read opens it again,
        # fresh (SQLAlchemy 2 pings no fresh connection), while the
        # writers keep one connection, never checked in (no ping, no
        # reset).
        sqlite = self.dialect == "sqlite"
        checked_in = reads if sqlite else writes + reads
        pings = checked_in if SQLALCHEMY_2 and not sqlite else 0
        calls = {"commit": writes, "ping": pings,
                 "rollback": reads + checked_in * RESETS}
        return ({k: v for k, v in calls.items() if v},
                reads if sqlite else 0)

    @property
    def write_ping(self):
        """The ping statement a write transaction starts with, if any."""
        return [] if self.dialect == "sqlite" else PING

    def count(self, func, *args, **kwargs):
        with counting.counting(self.driver.database.engine) as counter:
            func(*args, **kwargs)
        # SQLite's BEGIN is a statement for SQLAlchemy, not a round trip.
        return ([s for s in counter.statements if s != "BEGIN"],
                dict(counter.calls), counter.connects)

    @property
    def dialect(self):
        return self.driver.database.engine.dialect.name

    def test_an_allocation_is_its_statements_and_a_commit(self):
        statements, calls, connects = self.count(self.driver.allocate,
                                                 "net-1", scope="r")
        self.assertEqual(self.write_ping + ALLOCATE[self.dialect],
                         statements)
        # oslo.db's pool: a ping at checkout and a reset at check-in; on
        # SQLite the writers' kept connection, none of them.
        self.assertEqual(self.expected(writes=1), (calls, connects))

    def test_after_another_engine_the_insert_checks_the_rows(self):
        self.make_driver(pool_cidrs=["10.0.0.0/16"]).allocate("other",
                                                              scope="r")
        statements, calls, connects = self.count(self.driver.allocate,
                                                 "net-1", scope="r")
        # Unless the other engine took the candidate drawn (then a read of
        # the rows around it, and another insert), the same statements.
        self.assertIn(statements, (
            self.write_ping + ALLOCATE[self.dialect],
            self.write_ping + ["UPDATE", "INSERT", "SELECT", "INSERT"]))
        self.assertEqual(self.expected(writes=1), (calls, connects))

    def test_a_callable_taken_is_read_between_lock_and_insert(self):
        statements, calls, connects = self.count(
            self.driver.allocate, "net-1", scope="r", taken=list)
        # The lock, then the insert.
        self.assertEqual(self.write_ping + ALLOCATE[self.dialect],
                         statements)
        self.assertEqual(self.expected(writes=1), (calls, connects))

    def test_a_confirm_is_one_update_and_a_commit(self):
        self.driver.allocate("net-1", scope="r")
        statements, calls, connects = self.count(self.driver.confirm,
                                                 "net-1")
        self.assertEqual(self.write_ping + CONFIRM, statements)
        self.assertEqual(self.expected(writes=1), (calls, connects))

    def test_a_read_is_one_select_ended_by_its_rollback(self):
        statements, calls, connects = self.count(self.driver.get, "warm-up")
        self.assertEqual(PING + ["SELECT"], statements)
        # A read transaction ends with a rollback: its own, not a reset of
        # the connection on top of it.
        self.assertEqual(self.expected(reads=1), (calls, connects))

    def test_no_yield_at_check_in_without_eventlet(self):
        with mock.patch("time.sleep") as sleep:
            self.driver.allocate("net-1", scope="r")
            self.driver.confirm("net-1")
        self.assertEqual([], sleep.call_args_list)

    def test_one_connection_serves_the_operations_that_follow(self):
        statements, calls, connects = self.count(self._many)
        self.assertEqual(self.expected(writes=11, reads=5),
                         (calls, connects))

    def _many(self):
        for i in range(5):
            self.driver.allocate("net-%d" % i, scope="r")
            self.driver.get("net-%d" % i)
            self.driver.confirm("net-%d" % i)
        self.driver.release("net-0")
