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

"""Dead engines' reservations, and the exhausted pool's story, on MariaDB
and PostgreSQL (SQLite: the unit tests)."""

from murano_cidr.tests.functional.db import base
from murano_cidr.tests import reclaim


class _Synced(object):

    def make_driver(self, **overrides):
        self.sync()
        return super().make_driver(**overrides)


class TestMySQL(base.MySQLBackend, _Synced, reclaim.ReclaimTests,
                base.DbTestCase):
    pass


class TestPostgresql(base.PostgresqlBackend, _Synced, reclaim.ReclaimTests,
                     base.DbTestCase):
    pass
