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

"""The interval-set comparisons of the bench (no timing is asserted)."""

from unittest import mock

import fixtures

from murano_cidr.measuring.bench import intervalsets
from murano_cidr.tests import base


class TestIntervalSets(base.TestCase):

    def test_every_piece_is_timed_against_netaddr(self):
        # Each piece's netaddr way gives the same answer (run checks it),
        # and every piece but the first read of taken is a target.
        pairs = intervalsets.run(repeat=1, rows=64)
        self.assertEqual(
            ["taken-cold", "taken-warm", "freemap-nth", "freemap-next",
             "hint", "walk", "block", "overlaps"], [p.name for p in pairs])
        self.assertEqual(["taken-cold"],
                         [p.name for p in pairs if not p.target])
        for pair in pairs:
            self.assertGreater(pair.hand, 0)
            self.assertGreater(pair.netaddr, 0)

    def test_a_netaddr_way_that_disagrees_is_refused(self):
        # A faster wrong answer must not pass for a comparison.
        self.useFixture(fixtures.MockPatchObject(
            intervalsets, "_nth_free_ipset", mock.Mock(return_value=None)))
        error = self.assertRaises(AssertionError, intervalsets.run,
                                  repeat=1, rows=64)
        self.assertIn("freemap-nth", str(error))

    def test_ratio(self):
        pair = intervalsets.Pair("p", "", hand=0.5, netaddr=2.0)
        self.assertEqual(4.0, pair.ratio)
        self.assertTrue(pair.target)
