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

"""Statements and round trips of the db driver on MySQL and PostgreSQL."""

from murano_cidr.tests.functional.db import base
from murano_cidr.tests import round_trips


class RoundTripTests(round_trips.RoundTripTests):

    def make_driver(self, **overrides):
        self.sync()
        return super().make_driver(**overrides)


class TestMySQL(base.MySQLBackend, RoundTripTests, base.DbTestCase):
    pass


class TestPostgresql(base.PostgresqlBackend, RoundTripTests,
                     base.DbTestCase):
    pass


class TestMySQLSessions(base.MySQLBackend, base.DbTestCase):

    def test_sessions_read_committed(self):
        # The hook that sets it loads with the server's timeouts
        # (drivers/db/timeouts.py), never for SQLite.
        self.sync()
        driver = self.make_driver()
        with driver.database.engine.connect() as conn:
            level = conn.get_isolation_level()
        self.assertEqual("READ COMMITTED", level)
