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

"""A Murano engine on a database server carries only what its driver runs.

The engine of :mod:`murano_cidr.tests.unit.test_runtime_imports` (one
network allocated, confirmed and released, in a fresh interpreter) with
``[cidr_allocator_database] connection`` on PostgreSQL and on MariaDB: the
server's own dialect module loads in place of SQLite's; and every path of
such an engine (:mod:`murano_cidr.tests.engine_paths`).
"""

from sqlalchemy.engine import url as sa_url
import testscenarios

from murano_cidr.engine.drivers.db import compat
from murano_cidr.tests import engine_paths
from murano_cidr.tests.functional.db import base
from murano_cidr.tests.unit import test_runtime_imports as imports

load_tests = testscenarios.load_tests_apply_scenarios

#: The ``db`` driver's modules that only an SQLite database loads.
SQLITE_ONLY = frozenset({"murano_cidr.engine.drivers.db.sqlite"})


class EngineImportsTests(object):

    #: The modules this backend loads besides the driver's others.
    server_modules = frozenset()

    def test_only_the_server_s_runtime_modules(self):
        modules = imports.run_engine(self, "db", self.url)["modules"]
        self.assertEqual(
            sorted(imports.CORE | imports.DRIVER_MODULES["db"] - SQLITE_ONLY
                   | self.server_modules), sorted(modules))


class TestPostgresql(base.PostgresqlBackend, EngineImportsTests,
                     base.DbTestCase):
    server_modules = frozenset({"murano_cidr.engine.drivers.db.postgresql"})


class TestMySQL(base.MySQLBackend, EngineImportsTests, base.DbTestCase):
    server_modules = frozenset({"murano_cidr.engine.drivers.db.mysql"})


class EnginePathsTests(object):
    """Every path of an engine on the server (engine_paths)."""

    scenarios = [(path, {"path": path}) for path in
                 ("happy",) + engine_paths.ERRORS["db"]]

    def test_carries_its_wing_only(self):
        # The engine reaches the server through a relay it cuts for
        # DatabaseUnavailable.
        url = sa_url.make_url(self.url)
        relayed = compat.url_string(url, host="127.0.0.1", port=1).replace(
            ":1/", ":{port}/")
        report = engine_paths.engine_path(
            self, "db", self.path, relayed,
            "[cidr_allocator_database]\ncall_timeout = 5\nmax_retries = 1\n",
            url.port or self.default_port)
        engine_paths.assertCarriesItsWingOnly(
            self, report, self.path, engine_paths.OVER_LIMIT["db"])


class TestPostgresqlPaths(base.PostgresqlBackend, EnginePathsTests,
                          base.DbTestCase):
    default_port = 5432


class TestMySQLPaths(base.MySQLBackend, EnginePathsTests, base.DbTestCase):
    default_port = 3306
