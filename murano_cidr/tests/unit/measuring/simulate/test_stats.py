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

"""The statistics printed beside the simulator's measurements."""

import fractions
import math

from murano_cidr.measuring.simulate import stats
from murano_cidr.tests import base


class TestWilsonInterval(base.TestCase):

    def test_half_of_ten(self):
        # The textbook value for 5 successes out of 10 at 95 %.
        low, high = stats.wilson_interval(5, 10)
        self.assertAlmostEqual(0.2366, low, places=4)
        self.assertAlmostEqual(0.7634, high, places=4)

    def test_none_of_ten(self):
        # At zero the interval is [0, z^2 / (n + z^2)].
        low, high = stats.wilson_interval(0, 10)
        self.assertEqual(0.0, low)
        z2 = stats.Z_95 ** 2
        self.assertAlmostEqual(z2 / (10 + z2), high, places=12)
        self.assertAlmostEqual(0.2775, high, places=4)

    def test_all_of_ten_mirrors_none(self):
        low, high = stats.wilson_interval(10, 10)
        self.assertAlmostEqual(1.0 - stats.wilson_interval(0, 10)[1], low,
                               places=12)
        self.assertEqual(1.0, high)

    def test_large_sample(self):
        # 62 of 2000 (the legacy K=2 rate): interval around 3.1 %.
        low, high = stats.wilson_interval(62, 2000)
        self.assertAlmostEqual(0.02427, low, places=4)
        self.assertAlmostEqual(0.03957, high, places=4)
        self.assertLess(low, 62 / 2000)
        self.assertGreater(high, 62 / 2000)

    def test_no_trials(self):
        self.assertEqual((0.0, 1.0), stats.wilson_interval(0, 0))

    def test_bad_counts(self):
        self.assertRaises(ValueError, stats.wilson_interval, 3, 2)
        self.assertRaises(ValueError, stats.wilson_interval, -1, 2)


class TestBirthdayBound(base.TestCase):

    def test_murano_defaults(self):
        # The published numbers: 32 slots, K=2 and K=10.
        self.assertAlmostEqual(1 / 32, stats.birthday_bound(2, 32),
                               places=12)
        # 1 - 32! / (22! * 32**10), computed exactly: 0.79207564...
        exact = 1 - fractions.Fraction(math.perm(32, 10), 32 ** 10)
        self.assertAlmostEqual(float(exact), stats.birthday_bound(10, 32),
                               places=12)
        self.assertAlmostEqual(0.792076, stats.birthday_bound(10, 32),
                               places=6)

    def test_random_pool(self):
        # 256 slots, ten concurrent deployments: the 16.3 % of DESIGN.md.
        self.assertAlmostEqual(0.1631, stats.birthday_bound(10, 256),
                               places=4)

    def test_classic_birthday(self):
        self.assertAlmostEqual(0.507297, stats.birthday_bound(23, 365),
                               places=6)

    def test_edges(self):
        self.assertEqual(0.0, stats.birthday_bound(1, 32))
        self.assertEqual(0.0, stats.birthday_bound(0, 32))
        self.assertEqual(1.0, stats.birthday_bound(33, 32))
        self.assertAlmostEqual(1.0, stats.birthday_bound(32, 32))
        self.assertRaises(ValueError, stats.birthday_bound, -1, 32)


class TestTrialsForCertainty(base.TestCase):

    def test_smallest_count(self):
        n = stats.trials_for_certainty(0.5, 1e-3)
        self.assertEqual(10, n)
        self.assertLess(stats.chance_of_no_event(0.5, n), 1e-3)
        self.assertGreaterEqual(stats.chance_of_no_event(0.5, n - 1), 1e-3)

    def test_bad_input(self):
        self.assertRaises(ValueError, stats.trials_for_certainty, 0.0, 0.1)
        self.assertRaises(ValueError, stats.trials_for_certainty, 0.5, 1.0)
