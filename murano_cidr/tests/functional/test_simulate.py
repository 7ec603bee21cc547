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

"""``murano-cidr simulate`` end to end: real drivers in real processes.

One run on Murano's old pool (20 environments: 32 subnets), ten concurrent
engines, :data:`TRIALS` trials. For uniform or hash-spread picks the chance
that ten engines do not collide in one trial is ``1 - B`` with ``B`` the
birthday bound over 32 slots (0.79208), so the chance that ``legacy`` never
collides in :data:`TRIALS` trials is ``0.20792 ** 20 = 2.3e-14``, far below
1e-9. The same run must show no collision at all for ``lock`` and ``db``:
had they done no better than ``legacy``, that would happen with the same
vanishing chance.
"""

import contextlib
import io
import json

from murano_cidr.engine.drivers import installed
from murano_cidr.measuring.simulate import stats
from murano_cidr.operator.cmd import cli
from murano_cidr.tests import base

K = 10
SLOTS = 32
TRIALS = 20

#: The chance that ``legacy`` shows no collision in the whole run.
CHANCE_OF_NO_LEGACY_COLLISION = stats.chance_of_no_event(
    stats.birthday_bound(K, SLOTS), TRIALS)


class TestSimulate(base.TestCase):

    def test_legacy_collides_and_the_fixes_never_do(self):
        self.assertLess(CHANCE_OF_NO_LEGACY_COLLISION, 1e-9)
        # 14 trials would do; 20 leave a wide margin.
        self.assertGreaterEqual(TRIALS, stats.trials_for_certainty(
            stats.birthday_bound(K, SLOTS), 1e-9))
        drivers = ["legacy", "lock", "db"]
        names = installed.names()
        for name in drivers:
            self.assertIn(name, names)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = cli.main(["simulate", "--drivers", ",".join(drivers),
                             "--max-environments", "20", "-k", str(K),
                             "--trials", str(TRIALS), "--seed", "1502437",
                             "--format", "json", "--quiet"])
        self.assertEqual(0, code)
        doc = json.loads(out.getvalue())
        results = {r["driver"]: r for r in doc["results"]}
        self.assertEqual(set(drivers), set(results))
        for name in drivers:
            r = results[name]
            self.assertEqual(TRIALS, r["trials"], name)
            self.assertEqual(SLOTS, r["pool_size"], name)
            self.assertEqual(0, r["errors"], r["first_error"])
            self.assertAlmostEqual(stats.birthday_bound(K, SLOTS),
                                   r["birthday_bound"])
        self.assertGreater(results["legacy"]["collided"], 0)
        for name in drivers[1:]:
            self.assertEqual(0, results[name]["collided"], name)
            self.assertEqual(0, results[name]["refused"], name)
            self.assertEqual(0.0, results[name]["ci95_low"], name)
