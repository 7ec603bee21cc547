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

"""One way to write SQL on SQLAlchemy 1.3 to 2.x (floor-ussuri runs 1.3)."""

import datetime

import sqlalchemy as sa

from murano_cidr.engine.drivers.db import allocating
from murano_cidr.engine.drivers.db import compat
from murano_cidr.engine.drivers.db import connection
from murano_cidr.operator.drivers.db import records
from murano_cidr.tests import base
from murano_cidr.tests.unit.drivers.db import base as db_base

ALLOCATIONS = allocating.ALLOCATIONS


class TestUrls(base.TestCase):

    def test_another_query_keeps_the_password_and_the_rest(self):
        url = sa.engine.url.make_url("postgresql://u:p%40w@h:5/db?a=1")
        self.assertEqual("postgresql://u:p%40w@h:5/db?b=2",
                         compat.url_string(url, query={"b": "2"}))
        self.assertEqual({"a": "1"}, dict(url.query))  # not changed

    def test_an_in_memory_sqlite_url_keeps_its_query(self):
        # SQLAlchemy 1.3 parsed "sqlite://?check_same_thread=false" as a
        # host named "?check_same_thread=false".
        url, seconds = connection.connect_url("sqlite://", "timeout=7", "g")
        parsed = sa.engine.url.make_url(url)
        self.assertEqual((":memory:", None, None),
                         (parsed.database, parsed.host, seconds))
        self.assertEqual({"check_same_thread": "false", "timeout": "7"},
                         dict(parsed.query))


class TestStatements(db_base.DbTestCase):

    def test_select_case_and_scalar_subquery_run(self):
        driver = self.make_driver()
        driver.allocate("net-1", scope="r")
        owner = compat.scalar_subquery(compat.select(ALLOCATIONS.c.owner))
        statement = compat.select(
            compat.case((ALLOCATIONS.c.scope == "r", 1), else_=0), owner)
        with self.database.engine.connect() as conn:
            self.assertEqual([(1, "net-1")],
                             [tuple(r) for r in conn.execute(statement)])

    def test_the_server_clock_is_a_datetime(self):
        # Unlabelled, SQLAlchemy 1.3 on SQLite returned the text.
        moment = records.now(self.make_driver())
        self.assertIsInstance(moment, datetime.datetime)
        self.assertEqual(datetime.timezone.utc, moment.tzinfo)
