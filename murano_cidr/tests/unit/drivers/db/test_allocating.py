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

"""The db driver's search, without a database."""

import collections
import random

import netaddr
import testtools

from murano_cidr.engine.drivers.db import allocating
from murano_cidr.engine.drivers.db import hints
from murano_cidr.engine import freemap
from murano_cidr.engine import pool as pool_mod
from murano_cidr.engine import taken as taken_mod


class TestPick(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.rng = random.Random(1502437)

    def test_finds_the_one_free_candidate_anywhere(self):
        size = 4096
        for free in (0, 1, 2047, 4095):
            blocked = freemap.BlockedRanges(size, [(0, size - 1)])
            blocked.discard(free, free)
            taken_map = freemap.FreeMap(size, [])
            for _ in range(20):
                self.assertEqual(free, hints.pick(taken_map, blocked,
                                                  self.rng))

    def test_needs_both_maps_free(self):
        # Even candidates taken, odd ones blocked, but for one of each.
        size = 512
        taken_map = freemap.FreeMap(size, [(i, i) for i in range(0, size, 2)
                                           if i != 100])
        blocked = freemap.BlockedRanges(size)
        for i in range(1, size, 2):
            blocked.add(i, i)
        blocked.add(100, 100)
        self.assertIsNone(hints.pick(taken_map, blocked, self.rng))
        blocked.discard(100, 100)
        self.assertEqual(100, hints.pick(taken_map, blocked, self.rng))

    def test_draws_uniformly_among_free_candidates(self):
        size = 64
        blocked = freemap.BlockedRanges(size, [(0, 47)])
        taken_map = freemap.FreeMap(size, [(60, 63)])
        counts = collections.Counter(
            hints.pick(taken_map, blocked, self.rng) for _ in range(6000))
        self.assertEqual(set(range(48, 60)), set(counts))
        # 500 expected each; a biased walk would give the first far more.
        self.assertLess(max(counts.values()), 650)

    def test_nothing_free(self):
        self.assertIsNone(hints.pick(freemap.FreeMap(8, [(0, 7)]),
                                     freemap.BlockedRanges(8), self.rng))
        self.assertIsNone(hints.pick(freemap.FreeMap(8, []),
                                     freemap.BlockedRanges(8, [(0, 7)]),
                                     self.rng))


class TestHint(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.pool = pool_mod.Pool([netaddr.IPNetwork("10.0.0.0/22"),
                                   netaddr.IPNetwork("192.168.0.0/23")], 24)

    def held(self, *cidrs):
        return taken_mod.TakenSet.from_taken(cidrs, 4)

    def test_rows_of_any_size_block_the_candidates_they_touch(self):
        hint = hints.Hint(self.pool, self.held("10.0.1.128/25",
                                               "10.0.2.0/23"))
        self.assertEqual([False, True, True, True, False, False],
                         [hint.blocked.is_blocked(i) for i in range(6)])
        hint.learn(0, 3, self.held("10.0.0.0/24"))
        self.assertEqual([True, False, False, False],
                         [hint.blocked.is_blocked(i) for i in range(4)])
        hint.block(5)
        self.assertTrue(hint.blocked.is_blocked(5))

    def test_window_stays_in_its_network(self):
        self.assertEqual((1, 3), allocating.window(self.pool, 1))
        self.assertEqual((4, 5), allocating.window(self.pool, 4))

    def test_hints_are_per_scope_pool_and_bounded(self):
        kept = hints.Hints(max_scopes=2)
        for scope in ("a", "b", "c"):
            kept.keep(scope, hints.Hint(self.pool, self.held()))
        self.assertIsNone(kept.get("a", self.pool))
        self.assertIsNotNone(kept.get("c", self.pool))
        other = pool_mod.Pool([netaddr.IPNetwork("10.0.0.0/22")], 24)
        self.assertIsNone(kept.get("c", other))
        kept.forget("c")
        self.assertIsNone(kept.get("c", self.pool))
        self.assertIsNotNone(kept.get("b", self.pool))
