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

import random

import testtools

from murano_cidr.engine import freemap


class TestFreeMap(testtools.TestCase):

    def test_nth_free_enumerates_free_indices_in_order(self):
        fm = freemap.FreeMap(20, [(0, 1), (5, 7), (6, 9), (15, 15), (19, 19)])
        expected = [i for i in range(20)
                    if i not in {0, 1, 5, 6, 7, 8, 9, 15, 19}]
        self.assertEqual(len(expected), fm.free)
        self.assertEqual(expected, [fm.nth_free(n) for n in range(fm.free)])
        self.assertRaises(IndexError, fm.nth_free, fm.free)

    def test_next_free_is_a_linear_probe(self):
        blocked = {0, 1, 5, 6, 7, 8, 9, 15, 19}
        fm = freemap.FreeMap(20, [(0, 1), (5, 9), (15, 15), (19, 19)])
        for start in range(-25, 45):
            probe = start % 20
            while probe in blocked:
                probe = (probe + 1) % 20
            self.assertEqual(probe, fm.next_free(start), start)

    def test_full(self):
        fm = freemap.FreeMap(4, [(0, 3)])
        self.assertEqual(0, fm.free)
        self.assertIsNone(fm.next_free(2))
        self.assertRaises(IndexError, fm.nth_free, 0)


class TestBlockedRanges(testtools.TestCase):

    def test_changes_match_a_set_of_indices(self):
        rng = random.Random(1502437)
        size = 64
        blocked = freemap.BlockedRanges(size)
        model = set()
        for _ in range(2000):
            lo = rng.randrange(size)
            hi = min(size - 1, lo + rng.randrange(6))
            if rng.random() < 0.6:
                blocked.add(lo, hi)
                model.update(range(lo, hi + 1))
            else:
                blocked.discard(lo, hi)
                model.difference_update(range(lo, hi + 1))
            self.assertEqual([i in model for i in range(size)],
                             [blocked.is_blocked(i) for i in range(size)])
            start = rng.randrange(size)
            expected = next((i for i in range(start, size)
                             if i not in model), None)
            self.assertEqual(expected, blocked.next_unblocked(start))
            # Merged: no two ranges touch.
            ranges = list(zip(blocked._los, blocked._his))
            for (_lo1, hi1), (lo2, _hi2) in zip(ranges, ranges[1:]):
                self.assertLess(hi1 + 1, lo2)

    def test_built_from_a_free_map(self):
        fm = freemap.FreeMap(20, [(0, 1), (5, 9), (15, 15)])
        blocked = freemap.BlockedRanges(20, fm.blocked_ranges())
        self.assertEqual([(0, 1), (5, 9), (15, 15)], fm.blocked_ranges())
        self.assertEqual([fm.is_free(i) for i in range(20)],
                         [not blocked.is_blocked(i) for i in range(20)])
        self.assertEqual(3, len(blocked))
        self.assertIsNone(freemap.BlockedRanges(4, [(0, 3)])
                          .next_unblocked(0))
