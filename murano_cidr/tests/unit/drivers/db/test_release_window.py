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

"""The db driver's release window on SQLite (other backends: functional)."""

import datetime
import types

import testtools

from murano_cidr.drivers.db import releasing
from murano_cidr import taken as taken_mod
from murano_cidr.tests import release_window
from murano_cidr.tests.unit.drivers.db import base


class TestReleaseWindow(release_window.ReleaseWindowTests, base.DbTestCase):
    pass


class TestFreeable(testtools.TestCase):
    """Which released rows a read of ``taken`` may free."""

    def row(self, released_at):
        return types.SimpleNamespace(range_first="0a140000",
                                     range_last="0a1400ff",
                                     released_at=released_at)

    def test_a_release_in_the_cutoff_s_second_is_not_freed(self):
        cutoff = datetime.datetime(2026, 12, 1, 12, 0, 0)
        second = datetime.timedelta(seconds=1)
        empty = taken_mod.TakenSet(4)
        self.assertEqual({}, releasing.freeable([self.row(cutoff)], cutoff,
                                                empty))
        self.assertEqual({}, releasing.freeable([self.row(cutoff + second)],
                                                cutoff, empty))
        self.assertEqual({}, releasing.freeable([self.row(None)], cutoff,
                                                empty))
        before = self.row(cutoff - second)
        self.assertEqual({"0a140000": before},
                         releasing.freeable([before], cutoff, empty))
        self.assertEqual({}, releasing.freeable(
            [before], cutoff, taken_mod.TakenSet.from_taken(
                ["10.20.0.128/25"], 4)))
