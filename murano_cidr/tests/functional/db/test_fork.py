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

"""A forked engine worker drops the allocator it inherited, safely.

The parent built the process-wide allocator (its database connection is
open) and forks; the child forgets what it inherited, as the integration
guide tells it to. The parent's database session must survive: the child
must not close it (closing a libpq connection tells the server to end the
session, which is the parent's).
"""

import gc
import os

import sqlalchemy as sa

from murano_cidr.engine.integration import murano
from murano_cidr.tests import base as tests_base
from murano_cidr.tests.functional.db import base


class ForkTests(object):

    def backend_session(self, driver):
        with driver.database.engine.connect() as conn:
            return conn.execute(sa.text(self.session_query)).scalar()

    def test_child_drops_the_inherited_allocator(self):
        self._fork(child_resets=True)

    def test_a_fork_drops_it_by_itself(self):
        self._fork(child_resets=False)

    def _fork(self, child_resets):
        self.sync()
        self.db_config(max_pool_size=1, max_overflow=0)
        self.config(**self.pool_settings)
        murano.reset_shared_allocator()
        self.addCleanup(murano.reset_shared_allocator)
        shared = murano.shared_allocator(self.conf)
        first = shared.driver.allocate("net-1", scope="r")
        session = self.backend_session(shared.driver)
        pid = os.fork()
        if pid == 0:  # the child
            code = 1
            try:
                if child_resets:
                    murano.reset_shared_allocator()
                gc.collect()
                code = 0 if murano.shared_allocator(self.conf) is not \
                    shared else 2
                gc.collect()
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(0, tests_base.exit_code(status))
        self.assertIs(shared, murano.shared_allocator())
        self.assertEqual(session, self.backend_session(shared.driver))
        self.assertEqual(first, shared.driver.allocate("net-1", scope="r"))
        self.assertNotEqual(first, shared.driver.allocate("net-2",
                                                          scope="r"))


class TestPostgresql(base.PostgresqlBackend, ForkTests, base.DbTestCase):
    session_query = "SELECT pg_backend_pid()"


class TestMySQL(base.MySQLBackend, ForkTests, base.DbTestCase):
    session_query = "SELECT CONNECTION_ID()"
