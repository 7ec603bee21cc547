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

"""Each database's dialect plugin is found by the URL's backend."""

import sqlalchemy as sa
import testtools

from murano_cidr.engine.drivers.db import connection
from murano_cidr.engine.drivers.db import errors
from murano_cidr.engine.drivers.db import mysql
from murano_cidr.engine.drivers.db import postgresql
from murano_cidr.engine.drivers.db import sqlite
from murano_cidr import exceptions


class TestDialects(testtools.TestCase):

    def dialect(self, url):
        return connection.dialect(sa.engine.url.make_url(url))

    def test_each_backend_gets_its_plugin(self):
        for url, kind in (("sqlite:///x.db", sqlite.SQLite),
                          ("postgresql+psycopg2://u@h/d",
                           postgresql.PostgreSQL),
                          ("mysql+pymysql://u@h/d", mysql.MySQL)):
            self.assertIsInstance(self.dialect(url), kind)

    def test_a_backend_without_a_plugin_gets_the_base(self):
        self.assertIs(connection.Dialect,
                      type(self.dialect("mssql+pyodbc://u@h/d")))

    def test_our_own_errors_are_never_retried(self):
        # Issue 32: a PoolExhausted raised inside a transaction was
        # classified as a database error first.
        for dialect in (connection.Dialect(), sqlite.SQLite()):
            self.assertFalse(errors.retriable(
                dialect, exceptions.PoolExhausted(
                    pool="10.0.0.0/24", prefixlen=24, scope="r", size=1,
                    allocated=1, taken=0, held_back=""),
                True, float("inf")))
