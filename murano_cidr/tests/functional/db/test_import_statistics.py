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


"""After a bulk import, PostgreSQL plans the checked insert from statistics.

Until a table is analyzed, PostgreSQL may answer the checked insert's
lookups by filtering every row of the scope through the (scope,
released_at) index, once per lookup, rather than by the unique key. An
import of many rows is where a table first holds thousands of them, so
the import refreshes the statistics itself.
"""

import sqlalchemy as sa

from murano_cidr.engine import allocation as allocation_mod
from murano_cidr.engine.drivers.db import allocating
from murano_cidr.operator.drivers.db import bulk_import
from murano_cidr.tests.functional.db import base

_RELTUPLES = sa.text("SELECT reltuples FROM pg_class WHERE relname = :name")


class TestPostgresql(base.PostgresqlBackend, base.DbTestCase):

    def _import(self, driver, count, scope):
        pool = driver.pool()
        driver.import_allocations(
            [allocation_mod.Allocation(owner="%s-%d" % (scope, i),
                                       cidr=pool.cidr(i), scope=scope)
             for i in range(count)])

    def _reltuples(self):
        with self.engine.connect() as conn:
            return conn.execute(_RELTUPLES,
                                {"name": allocating.ALLOCATIONS.name}).scalar()

    def test_a_bulk_import_refreshes_the_statistics(self):
        self.sync()
        driver = self.make_driver()
        self._import(driver, bulk_import.ANALYZE_AFTER - 1, "small")
        # A small import leaves them to autovacuum: never analyzed.
        self.assertLessEqual(self._reltuples(), 0)
        self._import(driver, bulk_import.ANALYZE_AFTER, "bulk")
        self.assertEqual(2 * bulk_import.ANALYZE_AFTER - 1, self._reltuples())
