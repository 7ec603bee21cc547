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

"""The pool-math benchmark's pieces (no timing is asserted here)."""

import random
import uuid

import netaddr

from murano_cidr.engine import allocator
from murano_cidr.measuring.bench import poolmath
from murano_cidr.measuring.bench import timing
from murano_cidr.tests import base


class TestMuranoScan(base.TestCase):

    def test_agrees_with_the_legacy_driver(self):
        # The baseline must be Murano's pick: same CIDR as the legacy
        # driver (Murano's behaviour, kept bit for bit) in this process.
        self.config(driver="legacy", max_environments=64)
        legacy = allocator.get_allocator(self.conf)
        scan = poolmath.MuranoScan("10.0.0.0/18", 24)
        self.assertEqual(64, len(scan.candidates))
        rng = random.Random(3)
        for _ in range(50):
            taken = ["10.0.%d.0/24" % i
                     for i in rng.sample(range(64), rng.randrange(63))]
            owner = str(uuid.uuid4())
            self.assertEqual(legacy.allocate(owner, taken=taken),
                             scan.pick(owner, taken))

    def test_a_start_replaces_the_hash(self):
        # Timed from evenly spaced starts, the scan costs the same in every
        # run; from that start it probes as Murano did.
        scan = poolmath.MuranoScan("10.0.0.0/22", 24)
        self.assertEqual("10.0.2.0/24", scan.pick("net", [], start=2))
        self.assertEqual("10.0.3.0/24",
                         scan.pick("net", ["10.0.2.0/24"], start=2))
        self.assertEqual("10.0.0.0/24",
                         scan.pick("net", ["10.0.2.0/23"], start=2))

    def test_bigger_taken_network_blocks_its_subnets(self):
        scan = poolmath.MuranoScan("10.0.0.0/30", 31)
        self.assertIsNone(scan.pick("net", ["10.0.0.0/24"]))
        self.assertEqual("10.0.0.2/31", scan.pick("net", ["10.0.0.0/31"]))


class TestTargets(base.TestCase):

    def test_at_most(self):
        self.assertTrue(poolmath.Target("t", 1.5, 2.0, True, "").passed)
        self.assertTrue(poolmath.Target("t", 2.0, 2.0, True, "").passed)
        self.assertFalse(poolmath.Target("t", 2.1, 2.0, True, "").passed)

    def test_at_least(self):
        self.assertTrue(poolmath.Target("t", 1000, 1000, False, "").passed)
        self.assertFalse(poolmath.Target("t", 999, 1000, False, "").passed)
        self.assertTrue(
            poolmath.Target("t", 5, 2, False, "").to_dict()["passed"])


class TestSampleTaken(base.TestCase):

    def setUp(self):
        super().setUp()
        self.pool = poolmath.random_driver(["10.0.0.0/16"], 24).pool()

    def test_uniform(self):
        taken = poolmath.sample_taken(self.pool, 100, random.Random(1))
        self.assertEqual(100, len(set(taken)))
        self.assertTrue(all(self.pool.contains(c) for c in taken))
        self.assertEqual({24}, {netaddr.IPNetwork(c).prefixlen
                                for c in taken})

    def test_packed(self):
        taken = poolmath.sample_taken(self.pool, 10, random.Random(1),
                                      packed=True)
        self.assertEqual({"10.0.%d.0/24" % i for i in range(10)},
                         set(taken))


class TestTiming(base.TestCase):

    def test_percentile(self):
        values = list(range(1, 101))
        self.assertEqual(50, timing.percentile(values, 0.5))
        self.assertEqual(99, timing.percentile(values, 0.99))
        self.assertEqual(100, timing.percentile(values, 1.0))
        self.assertEqual(7, timing.percentile([7], 0.99))
        self.assertEqual(2, timing.percentile([3, 1, 2], 0.5))
        self.assertRaises(ValueError, timing.percentile, [], 0.5)
        self.assertRaises(ValueError, timing.percentile, [1], 0)
