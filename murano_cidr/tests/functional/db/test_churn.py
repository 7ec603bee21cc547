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

"""Released CIDRs come back, and any process may end what another began.

Real processes (:mod:`murano_cidr.tests.functional.db.workers`), as the
engine's workers are: RabbitMQ hands a deployment and its deletion to any
of them.
"""

from murano_cidr.tests.functional.db import base
from murano_cidr.tests.functional.db import workers

#: 16 /24s.
POOL = {"driver": "db", "pool_cidrs": ["10.30.0.0/20"],
        "subnet_prefixlen": 24, "release_grace": 0}

CYCLES = 500


class ChurnTests(object):

    def setUp(self):
        super().setUp()
        self.sync()

    def test_allocate_and_release_never_exhausts_a_pool_it_frees(self):
        # Two processes, 500 allocate-and-release cycles each, nothing on
        # the router, no grace period: every released CIDR may come back
        # at once, so the 16-subnet pool is never exhausted.
        results = self.run_workers(workers.churn, [
            (self.url, POOL, "router-1", "p%d" % p, CYCLES)
            for p in range(2)])
        self.assertEqual([{"allocated": CYCLES}] * 2, results)

    def test_another_process_confirms_and_releases(self):
        allocated, = self.run_workers(workers.call, [
            (self.url, POOL, "allocate", ("net-1", "router-1"))])
        self.assertTrue(allocated.startswith("10.30."), allocated)
        confirmed, = self.run_workers(workers.call, [
            (self.url, POOL, "confirm", ("net-1",))])
        self.assertIsNone(confirmed)
        driver = self.make_driver(**POOL)
        self.assertTrue(driver.get("net-1").confirmed)
        released, = self.run_workers(workers.call, [
            (self.url, POOL, "release", ("net-1",))])
        self.assertIs(True, released)
        self.assertIsNone(driver.get("net-1"))
        # The pool full but for it: the next allocation gets it back.
        taken = ["10.30.%d.0/24" % i for i in range(16)
                 if "10.30.%d.0/24" % i != allocated]
        self.assertEqual(allocated, driver.allocate("net-2",
                                                    scope="router-1",
                                                    taken=taken))


class TestSqlite(base.SqliteBackend, ChurnTests, base.DbTestCase):
    pass


class TestMySQL(base.MySQLBackend, ChurnTests, base.DbTestCase):
    pass


class TestPostgresql(base.PostgresqlBackend, ChurnTests, base.DbTestCase):
    pass
