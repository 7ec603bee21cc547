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

"""Many processes allocating at once: the database keeps them apart."""

import collections

import netaddr

from murano_cidr.tests.functional.db import base
from murano_cidr.tests.functional.db import workers

# NOTE: four processes on CI's two cores already queue on one scope's
# lock at every allocation; more processes only lengthen the run.
PROCESSES = 4


class ConcurrencyTests(object):

    def setUp(self):
        super().setUp()
        self.sync()

    def allocate_in_processes(self, owner_lists, settings_list=None,
                              scope="router-1"):
        settings_list = settings_list or [self.pool_settings] * len(
            owner_lists)
        results = self.run_workers(workers.allocate_many, [
            (self.url, dict(settings), scope, owners, seed)
            for seed, (owners, settings) in enumerate(zip(owner_lists,
                                                          settings_list))])
        outcomes = [item for result in results for item in result]
        unhandled = [o for o in outcomes
                     if o[2] and o[2].startswith("UNHANDLED")]
        self.assertEqual([], unhandled)
        return outcomes

    def assertNoOverlap(self, cidrs):
        nets = sorted(netaddr.IPNetwork(c) for c in cidrs)
        for a, b in zip(nets, nets[1:]):
            self.assertLess(a.last, b.first, "%s overlaps %s" % (a, b))

    def stored(self, scope="router-1"):
        driver = self.make_driver()
        return {a.owner: a.cidr for a in driver.list(scope)}

    def test_many_processes_one_scope(self):
        self.config(pool_cidrs=["10.0.0.0/12"])
        self.pool_settings = dict(self.pool_settings,
                                  pool_cidrs=["10.0.0.0/12"])
        owner_lists = [["p%d-n%d" % (p, n) for n in range(60)]
                       for p in range(PROCESSES)]
        outcomes = self.allocate_in_processes(owner_lists)
        self.assertEqual([], [o for o in outcomes if o[2]])
        got = {owner: cidr for owner, cidr, _error in outcomes}
        self.assertEqual(PROCESSES * 60, len(got))
        self.assertNoOverlap(got.values())
        self.assertEqual(got, self.stored())

    def test_pool_smaller_than_demand(self):
        # 64 candidates, 80 owners.
        self.pool_settings = dict(self.pool_settings,
                                  pool_cidrs=["10.0.0.0/18"])
        owner_lists = [["p%d-n%d" % (p, n) for n in range(80 // PROCESSES)]
                       for p in range(PROCESSES)]
        outcomes = self.allocate_in_processes(owner_lists)
        won = {o[0]: o[1] for o in outcomes if o[1]}
        errors = collections.Counter(o[2] for o in outcomes if o[2])
        self.assertEqual(64, len(won))
        self.assertEqual({"PoolExhausted": 16}, dict(errors))
        self.assertNoOverlap(won.values())
        self.assertEqual(won, self.stored())

    def test_same_owners_from_every_process(self):
        owners = ["net-%d" % n for n in range(30)]
        outcomes = self.allocate_in_processes([owners] * PROCESSES)
        self.assertEqual([], [o for o in outcomes if o[2]])
        stored = self.stored()
        self.assertEqual(30, len(stored))
        for owner, cidr, _error in outcomes:
            self.assertEqual(stored[owner], cidr)
        self.assertNoOverlap(stored.values())

    def test_mixed_geometry(self):
        small = dict(self.pool_settings, subnet_prefixlen=24)
        large = dict(self.pool_settings, subnet_prefixlen=23)
        owner_lists = [["p%d-n%d" % (p, n) for n in range(25)]
                       for p in range(PROCESSES)]
        settings = [small, large] * (PROCESSES // 2)
        outcomes = self.allocate_in_processes(owner_lists, settings)
        self.assertEqual({"PoolExhausted"},
                         {o[2] for o in outcomes if o[2]} or
                         {"PoolExhausted"})
        won = {o[0]: o[1] for o in outcomes if o[1]}
        self.assertNoOverlap(won.values())
        self.assertEqual(won, self.stored())
        sizes = {netaddr.IPNetwork(c).prefixlen for c in won.values()}
        self.assertEqual({23, 24}, sizes)


class TestSqlite(base.SqliteBackend, ConcurrencyTests, base.DbTestCase):
    pass


class TestMySQL(base.MySQLBackend, ConcurrencyTests, base.DbTestCase):
    pass


class TestPostgresql(base.PostgresqlBackend, ConcurrencyTests,
                     base.DbTestCase):
    pass
