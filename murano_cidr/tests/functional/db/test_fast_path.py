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

"""The db driver's fast path on MySQL and PostgreSQL.

The shared tests (:mod:`murano_cidr.tests.fast_path`), a failed commit
being a connection the server killed, and threads of one process sharing
a summary while processes of other geometries allocate in the scope.
"""

import fixtures
from testtools import content

from murano_cidr.tests import fast_path
from murano_cidr.tests.functional.db import base
from murano_cidr.tests.functional.db import fast_path_workers
from murano_cidr.tests.functional import history

SCOPE = "router-1"
POOL = ["10.0.0.0/15"]


class FastPathTests(fast_path.FastPathTests):

    def setUp(self):
        super().setUp()
        self.sync()

    def break_commit(self, driver, dbapi_connection):
        """Have the server kill the connection; the commit then fails."""
        cursor = dbapi_connection.cursor()
        cursor.execute(self.own_id_sql)
        pid = cursor.fetchone()[0]
        cursor.close()
        with self.engine.connect() as admin:
            admin.exec_driver_sql(self.kill_sql % int(pid))

    def test_threads_share_a_summary_beside_other_geometries(self):
        directory = self.useFixture(fixtures.TempDir()).path
        settings = dict(self.pool_settings, pool_cidrs=POOL)
        # (name, subnet size, threads, steps per thread, release grace)
        engines = [("p24", 24, 4, 30, None), ("p23", 23, 2, 20, None),
                   ("p22", 22, 2, 10, 0)]
        args = []
        for name, prefixlen, threads, steps, grace in engines:
            engine = dict(settings, subnet_prefixlen=prefixlen)
            if grace is not None:
                engine["release_grace"] = grace
            args.append((self.url, engine, SCOPE, name, directory, threads,
                         steps))
        results = self.run_workers(fast_path_workers.allocate_in_threads,
                                   args)
        self.assertEqual([], [hung for _made, hung, _fast in results
                              if hung])
        ops = history.load(directory)
        final = {a.owner: a.cidr for a in self.make_driver(
            pool_cidrs=POOL).list(SCOPE)}
        self.assertEqual([], history.check(ops, final=final,
                                           allowed_errors=()))
        allocations = [op for op in ops if op.kind == history.ALLOCATE]
        self.assertEqual(4 * 30 + 2 * 20 + 2 * 10, len(allocations))
        won = [op for op in allocations if op.status == history.OK]
        released = [op for op in ops if op.kind == history.RELEASE]
        self.assertEqual(len(won) - len(released), len(final))
        fast = [fast for _made, _hung, fast in results]
        self.addDetail("fast inserts", content.text_content(str(fast)))
        # The fast path was taken, or the test proves nothing of it.
        self.assertGreater(sum(fast), 0)


class TestMySQL(base.MySQLBackend, FastPathTests, base.DbTestCase):
    own_id_sql = "SELECT CONNECTION_ID()"
    kill_sql = "KILL %d"


class TestPostgresql(base.PostgresqlBackend, FastPathTests,
                     base.DbTestCase):
    own_id_sql = "SELECT pg_backend_pid()"
    kill_sql = "SELECT pg_terminate_backend(%d)"
