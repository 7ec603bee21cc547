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

import testtools

from murano_cidr import freemap


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
