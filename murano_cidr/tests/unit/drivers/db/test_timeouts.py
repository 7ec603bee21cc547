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

"""Bounded waits: connection parameters, their merge, and the call deadline.

Pauses are recorded, not slept (``time.sleep`` is replaced), and the call
deadline runs on a fake clock.
"""

import subprocess
import sys

import fixtures
from oslo_db import exception as db_exc
from sqlalchemy import exc as sa_exc

from murano_cidr.engine.drivers.db import api
from murano_cidr.engine.drivers.db import errors
from murano_cidr.engine.drivers.db import mysql
from murano_cidr.engine.drivers.db import options as db_options
from murano_cidr.engine.drivers.db import postgresql
from murano_cidr import exceptions
from murano_cidr.tests import base

#: Nothing listens on port 1.
MYSQL_DOWN = "mysql+pymysql://murano:s3cret@127.0.0.1:1/murano"
PG_DOWN = "postgresql+psycopg2://murano:s3cret@127.0.0.1:1/murano"
PG = postgresql.PostgreSQL()


def pytest_psycopg2():
    import psycopg2
    import psycopg2.errors
    return psycopg2


class DatabaseTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.pauses = []
        self.useFixture(fixtures.MonkeyPatch("time.sleep",
                                             self.pauses.append))

    def database(self, url, **options):
        options.setdefault("max_retries", 0)
        self.config_fixture.config(group=db_options.GROUP,
                                   connection=url, **options)
        database = api.Database(self.conf)
        self.addCleanup(database.close)
        return database

    def query(self, url, **options):
        return dict(self.database(url, **options).engine.url.query)


class TestParameters(DatabaseTestCase):

    def test_operator_charset_replaces_ours_on_mysql(self):
        # Issue 19.2: the query was {'charset': ('utf8', 'utf8mb4')}.
        query = self.query(MYSQL_DOWN, connection_parameters="charset=utf8")
        self.assertEqual("utf8", query["charset"])

    def test_mysql_defaults_bound_every_wait(self):
        query = self.query(MYSQL_DOWN)
        self.assertEqual({"charset": "utf8mb4", "connect_timeout": "5",
                          "read_timeout": "20", "write_timeout": "20"},
                         {k: query[k] for k in ("charset", "connect_timeout",
                                                "read_timeout",
                                                "write_timeout")})
        self.assertIn("innodb_lock_wait_timeout = 18", query["init_command"])

    def libpq(self, number):
        self.useFixture(fixtures.MockPatch(
            "psycopg2.extensions.libpq_version", return_value=number))

    def test_postgresql_defaults_and_the_operator_wins(self):
        self.libpq(120000)
        query = self.query(PG_DOWN, connection_parameters=(
            "connect_timeout=2&application_name=engine"))
        self.assertEqual("2", query["connect_timeout"])
        self.assertEqual("engine", query["application_name"])
        self.assertEqual("10000", query["tcp_user_timeout"])
        self.assertEqual("3", query["keepalives_count"])
        self.assertIn("statement_timeout=20000", query["options"])
        self.assertIn("idle_in_transaction_session_timeout=15000",
                      query["options"])

    def test_no_tcp_user_timeout_for_a_libpq_before_12(self):
        # psycopg2-binary 2.8.5 and 2.8.6 (Ussuri to Wallaby) carry libpq
        # 11, which refuses to connect with it ("invalid connection
        # option"); the other bounds stay.
        self.libpq(110005)
        query = self.query(PG_DOWN)
        self.assertNotIn("tcp_user_timeout", query)
        self.assertEqual(("5", "3"), (query["connect_timeout"],
                                      query["keepalives_count"]))
        self.assertIn("statement_timeout=20000", query["options"])
        # The operator's own choice is given as it is.
        query = self.query(PG_DOWN,
                           connection_parameters="tcp_user_timeout=3000")
        self.assertEqual("3000", query["tcp_user_timeout"])

    def test_the_installed_libpq_is_read(self):
        import psycopg2.extensions
        self.assertEqual(psycopg2.extensions.libpq_version(),
                         postgresql.libpq_version("psycopg2"))
        self.assertEqual(
            psycopg2.extensions.libpq_version() >= 120000,
            "tcp_user_timeout" in self.query(PG_DOWN))

    def test_the_urls_own_query_wins_over_the_defaults(self):
        query = self.query(MYSQL_DOWN + "?read_timeout=7&charset=latin1")
        self.assertEqual(("7", "latin1"),
                         (query["read_timeout"], query["charset"]))

    def test_sqlite_gets_no_network_parameters(self):
        # Only what lets any thread write on the writers' kept connection.
        self.assertEqual({"check_same_thread": "false"},
                         self.query("sqlite://"))

    def test_sqlite_gets_the_operators_parameters_alone(self):
        query = self.query("sqlite://", connection_parameters="timeout=7")
        self.assertEqual("7", query["timeout"])
        self.assertNotIn("connect_timeout", query)
        e = self.assertRaises(exceptions.InvalidConfig, self.database,
                              "sqlite://", connection_parameters="a=1&a=2")
        self.assertIn("a is given twice", str(e))

    def test_bad_parameters_are_invalid_config(self):
        for bad, why in (("charset", "is not param1=value1"),
                         ("charset=", "charset has no value"),
                         ("a=1&a=2", "a is given twice"),
                         ("read_timeout=abc", "read_timeout=abc is not a"),
                         ("charset=utf9", "charset=utf9 is not a MySQL")):
            e = self.assertRaises(exceptions.InvalidConfig, self.database,
                                  MYSQL_DOWN, connection_parameters=bad)
            self.assertIn("connection_parameters", str(e))
            self.assertIn(why, str(e))

    def test_defaults_only_for_drivers_whose_names_we_know(self):
        self.assertEqual({"charset": "utf8mb4"}, mysql.defaults(
            api.sa.engine.url.make_url("mysql+mysqlconnector://h/d")))


class TestPostgresqlUnreachable(DatabaseTestCase):

    def test_refused_connection_waits_and_is_unavailable(self):
        # libpq 14 and later say "connection to server at ... failed",
        # which oslo.db does not know: it failed at once, unretried.
        database = self.database(PG_DOWN, max_retries=3, retry_interval=4)
        e = self.assertRaises(exceptions.DatabaseUnavailable,
                              database.wait_for_connection)
        self.assertEqual([4, 4], self.pauses)
        self.assertIn("cannot connect, 3 attempts", str(e))
        self.assertIn("murano:***@127.0.0.1:1", str(e))

    def test_server_errors_are_not_connection_errors(self):
        psycopg2 = pytest_psycopg2()

        def wrapped(error):
            return db_exc.DBError(sa_exc.OperationalError("SELECT 1", {},
                                                          error))

        self.assertFalse(errors.connection_failed(PG, wrapped(
            psycopg2.errors.QueryCanceled("canceling statement"))))
        self.assertTrue(errors.connection_failed(PG, wrapped(
            psycopg2.OperationalError("connection to server at ... "
                                      "failed"))))
        self.assertTrue(errors.connection_failed(
            PG, db_exc.DBConnectionError()))
        self.assertFalse(errors.connection_failed(PG, db_exc.DBError()))


class TestNoProcessWideState(base.TestCase):
    """Issue 26.3: loading the driver leaves oslo.db's filters alone.

    Another oslo.db user of the process (Murano's own engine) sees the
    same error for the same failure with murano-cidr loaded as without.
    Before, a filter added to oslo.db's process-wide registry turned its
    refused PostgreSQL connection into ``DBConnectionError``.
    """

    SCRIPT = (
        "import sys\n"
        "from oslo_db.sqlalchemy import engines\n"
        "if sys.argv[1] == 'load':\n"
        "    from murano_cidr.engine.drivers.db import driver\n"
        "    from murano_cidr.engine.drivers.db import (\n"
        "        api, connection, postgresql)\n"
        "engine = engines.create_engine(%r, max_retries=0)\n"
        "try:\n"
        "    engine.connect()\n"
        "except Exception as e:\n"
        "    print(type(e).__module__, type(e).__name__)\n" % PG_DOWN)

    def error_of_another_user(self, load):
        return subprocess.run(
            [sys.executable, "-c", self.SCRIPT, load],
            stdout=subprocess.PIPE, check=True,
            universal_newlines=True).stdout.strip()

    def test_another_users_errors_are_classified_as_without_us(self):
        self.assertEqual(self.error_of_another_user("alone"),
                         self.error_of_another_user("load"))


class TestCallDeadline(DatabaseTestCase):

    def setUp(self):
        super().setUp()
        self.now = 1000.0
        self.useFixture(fixtures.MonkeyPatch(
            "murano_cidr.engine.drivers.db.api.time.monotonic",
            lambda: self.now))
        self.database_ = self.database("sqlite://", call_timeout=10,
                                       db_max_retries=20)
        self.attempts = 0

    def failing(self, error, seconds):
        def func(conn):
            self.attempts += 1
            self.now += seconds
            raise error
        return func

    def test_no_retry_starts_after_call_timeout(self):
        e = self.assertRaises(
            exceptions.DatabaseUnavailable, self.database_.write,
            self.failing(db_exc.DBDeadlock(), 4))
        # 0 s, 4 s and 8 s started; at 12 s the deadline had passed.
        self.assertEqual(3, self.attempts)
        self.assertIn("call_timeout", str(e))

    def test_a_lost_connection_is_retried_within_the_deadline(self):
        self.assertRaises(exceptions.DatabaseUnavailable,
                          self.database_.read,
                          self.failing(db_exc.DBConnectionError(), 1))
        self.assertEqual(10, self.attempts)

    def test_retries_stop_at_db_max_retries_first(self):
        self.assertRaises(exceptions.DatabaseUnavailable,
                          self.database_.read,
                          self.failing(db_exc.DBDeadlock(), 0))
        self.assertEqual(21, self.attempts)


class TestNoReconnectLoop(DatabaseTestCase):

    def test_a_connection_that_cannot_be_made_is_not_retried(self):
        # The 124.7 s of issue 15: every one of db_max_retries reconnects
        # waited a connect timeout. Once the first connection was waited
        # for, an operation that cannot connect fails at once.
        database = self.database(MYSQL_DOWN, max_retries=0,
                                 db_max_retries=20)
        connects = []
        self.assertRaises(exceptions.DatabaseUnavailable, database.read,
                          connects.append)
        self.assertEqual([], connects)
        self.assertEqual([], self.pauses)
