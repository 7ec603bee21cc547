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

"""The lock fairness benchmark: what it makes of the workers' timings."""

import fixtures

from murano_cidr.measuring.bench import fairness
from murano_cidr.tests import base


class TestSummary(base.TestCase):

    def test_waits_and_completion(self):
        outs = [{"waits": [0.1, 0.2], "done": [10.1, 10.3], "errors": []},
                {"waits": [2.0, 0.1], "done": [12.0, 12.1], "errors": []}]
        result = fairness.summary(outs, began=10.0, allocations=2)
        self.assertEqual(4, result["allocations"])
        self.assertEqual([0.3, 2.1], result["completion"])
        self.assertAlmostEqual(1.8, result["spread"])
        self.assertAlmostEqual(2.0, result["first_wait_max"])
        self.assertEqual(2.0, result["wait_max"])
        self.assertEqual(0, result["errors"])

    def test_a_worker_that_got_nothing(self):
        outs = [{"waits": [], "done": [], "errors": ["LockUnavailable: x"]},
                {"waits": [0.5], "done": [1.5], "errors": []}]
        result = fairness.summary(outs, began=1.0, allocations=1)
        self.assertEqual(1, result["errors"])
        self.assertEqual("LockUnavailable: x", result["first_error"])
        self.assertEqual([0.5], result["completion"])


class TestCommandLine(base.TestCase):

    def test_a_service_is_required(self):
        err = self.useFixture(fixtures.StringStream("stderr"))
        self.useFixture(fixtures.MonkeyPatch("sys.stderr", err.stream))
        e = self.assertRaises(SystemExit, fairness.main, ["--workers", "2"])
        self.assertEqual(2, e.code)

    def test_counts_must_be_positive(self):
        err = self.useFixture(fixtures.StringStream("stderr"))
        self.useFixture(fixtures.MonkeyPatch("sys.stderr", err.stream))
        e = self.assertRaises(SystemExit, fairness.main,
                              ["--url", "redis://h", "--workers", "0"])
        self.assertEqual(2, e.code)
        err.stream.seek(0)
        self.assertIn("must be positive", err.stream.read())
