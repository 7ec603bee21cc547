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

"""The model of Neutron's allocator, and the bench step beside it."""

import ipaddress
import os
import random

import fixtures
from oslo_db import exception as db_exc
import sqlalchemy as sa

from murano_cidr.engine import allocator
from murano_cidr.engine.drivers.db import compat
from murano_cidr.engine.drivers.db import options as db_options
from murano_cidr.engine import pool
from murano_cidr.measuring.bench import drivers
from murano_cidr.measuring.bench import fillcost
from murano_cidr.measuring.bench import neutron_alloc
from murano_cidr.measuring.bench import neutron_compare
from murano_cidr.measuring.bench import report
from murano_cidr.measuring.bench import runner
from murano_cidr import opts
from murano_cidr.tests import base


def reference(prefixes, allocated, prefixlen):
    """Neutron's choice, computed another way: stdlib ipaddress, by hand.

    The free space is the pool minus what is allocated, in maximal
    blocks; the smallest block that holds ``prefixlen`` (the lowest of
    equal ones) gives its first subnet.
    """
    free = [ipaddress.ip_network(p) for p in prefixes]
    for cidr in map(ipaddress.ip_network, allocated):
        left = []
        for block in free:
            if cidr.subnet_of(block):
                left.extend(block.address_exclude(cidr))
            elif not block.subnet_of(cidr):
                left.append(block)
        free = left
    free = sorted(ipaddress.collapse_addresses(free),
                  key=lambda n: (-n.prefixlen, n.network_address))
    for block in free:
        if block.prefixlen <= prefixlen:
            return str(next(block.subnets(new_prefix=prefixlen)))
    return None


def overlapping(cidrs):
    """Return the pairs of CIDRs that overlap."""
    nets = [ipaddress.ip_network(c) for c in cidrs]
    return [(a, b) for i, a in enumerate(nets) for b in nets[i + 1:]
            if a.overlaps(b)]


class TestNeutronModel(base.TestCase):

    PREFIXES = ["10.0.0.0/24", "10.0.2.0/25"]

    def setUp(self):
        super().setUp()
        path = self.useFixture(fixtures.TempDir()).path
        self.url = "sqlite:///" + os.path.join(path, "neutron.sqlite")
        cm = neutron_alloc.model(self.url, self.PREFIXES)
        self.model = cm.__enter__()
        self.addCleanup(cm.__exit__, None, None, None)

    def test_same_cidrs_as_the_reference_and_never_an_overlap(self):
        rng = random.Random(1502437)
        live = {}
        exhausted = 0
        for _ in range(120):
            if live and rng.random() < 0.3:
                subnet = rng.choice(sorted(live))
                self.model.release([subnet])
                del live[subnet]
                continue
            prefixlen = rng.choice((26, 27, 28))
            expected = reference(self.PREFIXES, live.values(), prefixlen)
            if expected is None:
                self.assertRaises(neutron_alloc.NoPrefixSpace,
                                  self.model.allocate, prefixlen)
                exhausted += 1
                continue
            subnet, cidr = self.model.allocate(prefixlen)
            self.assertEqual(expected, cidr)
            live[subnet] = cidr
            self.assertEqual(sorted(live.values()),
                             sorted(self.model.cidrs()))
            self.assertEqual([], overlapping(live.values()))
        # The sequence reached a full pool and mixed sizes.
        self.assertGreater(exhausted, 0)
        self.assertGreater(len(set(live.values())), 3)

    def test_smallest_free_block_first(self):
        ids = self.model.fill(["10.0.0.0/26", "10.0.0.128/26"])
        self.assertEqual(2, len(ids))
        # 10.0.0.64/26 is the smallest free block, before the /25.
        self.assertEqual("10.0.0.64/26", self.model.allocate(26)[1])
        self.assertEqual("10.0.0.192/26", self.model.allocate(26)[1])
        self.assertEqual("10.0.2.0/26", self.model.allocate(26)[1])

    def test_the_pool_row_is_swapped_at_each_allocation(self):
        def pool_hash():
            with self.model.engine.connect() as conn:
                return conn.execute(compat.select(self.model.pools.c.hash)
                                    ).scalar()
        before = pool_hash()
        self.model.allocate(24)
        self.assertNotEqual(before, pool_hash())

    def test_a_lost_compare_and_swap_is_tried_again(self):
        real = self.model._lock_pool
        calls = []

        def lock_pool(conn):
            calls.append(conn)
            if len(calls) == 1:
                raise db_exc.RetryRequest(neutron_alloc.NoPrefixSpace("x"))
            return real(conn)
        self.useFixture(fixtures.MockPatchObject(
            self.model, "_lock_pool", side_effect=lock_pool))
        self.assertEqual("10.0.2.0/25", self.model.allocate(25)[1])
        self.assertEqual(2, len(calls))

    def test_its_tables_are_dropped(self):
        engine = sa.create_engine(self.url)
        self.addCleanup(engine.dispose)
        with neutron_alloc.model(self.url, ["10.1.0.0/16"]) as other:
            other.allocate(24)
            names = sa.inspect(engine).get_table_names()
            self.assertEqual(6, len([n for n in names if n.startswith(
                neutron_alloc.TABLE_PREFIX)]))
        names = sa.inspect(engine).get_table_names()
        # This test's own model is left, the other one is gone.
        self.assertEqual(3, len([n for n in names if n.startswith(
            neutron_alloc.TABLE_PREFIX)]))


def _cost(rows, ours, neutron):
    return neutron_compare.NeutronCost(rows, 5, ours, ours * 2, neutron,
                                       neutron * 2).to_dict()


class TestNeutronTargets(base.TestCase):

    def result(self):
        result = drivers.DriverResult("db-mysql", "db")
        result.neutron = [_cost(256, 0.002, 0.030), _cost(10000, 0.004,
                                                          0.100)]
        return result

    def test_at_least_10x_at_256_and_30x_at_10000(self):
        small, large = neutron_compare.targets(self.result())
        self.assertEqual((15.0, 10.0, True), (small.ratio, small.limit,
                                              small.passed))
        self.assertEqual((25.0, 30.0, False), (large.ratio, large.limit,
                                               large.passed))
        self.assertFalse(large.at_most)
        self.assertEqual("db-mysql: 10,000 live allocations: Neutron's "
                         "allocator (model) p50 vs ours", large.name)
        self.assertEqual("100.00 ms / 4.00 ms", large.detail)

    def test_none_without_figures(self):
        self.assertEqual([], neutron_compare.targets(
            drivers.DriverResult("db-mysql", "db", skipped="down")))

    def test_fewer_samples_at_10000(self):
        self.assertEqual(50, neutron_compare.samples_at(256, 50))
        self.assertEqual(neutron_compare.LARGE_SAMPLES,
                         neutron_compare.samples_at(10000, 50))
        self.assertEqual(3, neutron_compare.samples_at(10000, 3))

    def test_the_pool_has_room_for_10000(self):
        built = pool.Pool.from_murano(**neutron_compare.POOL)
        self.assertEqual((65536, 24, ["10.0.0.0/8"]),
                         (built.size, built.prefixlen,
                          [str(n) for n in built.networks]))
        self.assertGreater(built.size, max(neutron_compare.SIZES) + 1000)

    def test_report(self):
        result = self.result().to_dict()
        doc = {"settings": runner.Settings(backends=["db-mysql"]).__dict__,
               "machine": {}, "drivers": [result], "pool_math": [],
               "targets": []}
        text = report.table(doc)
        self.assertIn("Beside Neutron's allocator", text)
        self.assertIn("db-mysql  10,000        5     4.000     8.000  "
                      "      100.0        200.0         25.0x", text)
        rows = [(r["section"], r["metric"], r["value"])
                for r in report.rows(doc) if r["section"] == "neutron"]
        self.assertIn(("neutron", "256 speedup", 15.0), rows)
        self.assertIn(("neutron", "10000 neutron_p50", 0.1), rows)


class TestNeutronStep(base.TestCase):

    def test_both_take_turns_and_nothing_is_left(self):
        db = self.use_database("sqlite", self.config_fixture, sync=True)
        self.useFixture(fixtures.MonkeyPatch(
            "murano_cidr.measuring.bench.neutron_compare.POOL",
            {"pool_cidrs": ["10.0.0.0/20"], "subnet_prefixlen": 24}))
        groups = {opts.GROUP: {
            "driver": "db", "pool_cidrs": ["10.9.0.0/16"],
            "subnet_prefixlen": 24,
            "state_path": self.useFixture(fixtures.TempDir()).path},
            db_options.GROUP: {"connection": db.url}}
        allocated = []
        real_free = fillcost.free_owners

        def free_owners(driver, scope, owners):
            allocated.extend(driver.get(o).cidr for o in owners)
            return real_free(driver, scope, owners)
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.measuring.bench.fillcost.free_owners",
            side_effect=free_owners))
        costs = neutron_compare.measure(groups, db.url, 2, sizes=(3, 5))
        self.assertEqual([(3, 2), (5, 2)],
                         [(c.rows, c.samples) for c in costs])
        for cost in costs:
            self.assertLessEqual(cost.ours_p50, cost.ours_p90)
            self.assertLessEqual(cost.neutron_p50, cost.neutron_p90)
        # The step's own pool, beyond the fill, for both engines.
        self.assertEqual(6 * 2, len(allocated))
        for cidr in allocated:
            self.assertTrue(cidr.startswith("10.0."), cidr)
            self.assertGreaterEqual(int(cidr.split(".")[2]), 3)
        driver = allocator.get_allocator(self.conf)
        self.addCleanup(driver.close)
        self.assertEqual([], driver.list())
        self.assertEqual([], driver.list_released())
        engine = sa.create_engine(db.url)
        self.addCleanup(engine.dispose)
        self.assertEqual([], [n for n in sa.inspect(engine).get_table_names()
                              if n.startswith(neutron_alloc.TABLE_PREFIX)])

    def test_the_runner_adds_its_targets(self):
        measure = self.useFixture(fixtures.MockPatch(
            "murano_cidr.measuring.bench.neutron_compare.measure",
            return_value=[neutron_compare.NeutronCost(
                256, 5, 0.001, 0.002, 0.02, 0.03)])).mock
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.measuring.bench.fillcost.measure", return_value=[]))
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.measuring.bench.drivers.throughput"))
        doc = runner.run(runner.Settings(backends=["db-sqlite"], samples=2,
                                         pool_math=False))
        self.assertEqual(1, measure.call_count)
        self.assertEqual(20.0, doc["drivers"][0]["neutron"][0]["speedup"])
        self.assertIn("db-sqlite: 256 live allocations: Neutron's "
                      "allocator (model) p50 vs ours",
                      [t["name"] for t in doc["targets"]])
        measure.reset_mock()
        doc = runner.run(runner.Settings(backends=["db-sqlite"], samples=2,
                                         pool_math=False, neutron=False))
        self.assertEqual(0, measure.call_count)
        self.assertEqual([], doc["drivers"][0]["neutron"])
