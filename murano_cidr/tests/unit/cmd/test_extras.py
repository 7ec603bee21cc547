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

"""simulate and bench without their extras: one line naming the extra."""

import os
from unittest import mock

import fixtures

from murano_cidr.measuring.bench import runner as bench_runner
from murano_cidr.measuring.simulate import runner
from murano_cidr.operator.cmd import cli
from murano_cidr.tests import base


class TestMissingExtras(base.TestCase):

    def setUp(self):
        super().setUp()
        self.simulate_run = self.useFixture(fixtures.MockPatchObject(
            runner.Runner, "run", return_value=[])).mock
        self.bench_run = self.useFixture(fixtures.MockPatchObject(
            bench_runner, "run")).mock

    def on_a_terminal(self):
        # run_main's standard error is a string buffer, never a terminal.
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.measuring.progress.wanted",
            side_effect=lambda quiet=False, stream=None: not quiet))

    def without(self, module):
        # None in sys.modules makes "import module" raise ImportError.
        patcher = mock.patch.dict("sys.modules", {module: None})
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_simulate_progress_bar_needs_tqdm(self):
        self.on_a_terminal()
        self.without("tqdm")
        code, out, err = self.run_main(cli.main, "simulate", "--drivers",
                                       "legacy", "-k", "2", "--trials", "1")
        self.assertEqual(2, code)
        self.assertEqual(
            ["murano-cidr: error: murano-cidr simulate needs tqdm, which is "
             "not installed; run 'pip install murano-cidr[simulate]'"],
            err.splitlines())
        self.simulate_run.assert_not_called()

    def test_simulate_quiet_needs_no_tqdm(self):
        self.on_a_terminal()
        self.without("tqdm")
        code, out, err = self.run_main(cli.main, "simulate", "--drivers",
                                       "legacy", "-k", "2", "--trials", "1",
                                       "--quiet")
        self.assertEqual((0, ""), (code, err))
        self.simulate_run.assert_called_once_with()

    def test_simulate_plot_needs_matplotlib(self):
        self.without("matplotlib")
        code, out, err = self.run_main(
            cli.main, "simulate", "--drivers", "legacy", "-k", "2",
            "--trials", "1", "--quiet", "--plot",
            os.path.join(self.state_path, "p.png"))
        self.assertEqual(2, code)
        self.assertEqual(
            ["murano-cidr: error: murano-cidr simulate --plot needs "
             "matplotlib, which is not installed; run 'pip install "
             "murano-cidr[simulate]'"], err.splitlines())
        self.simulate_run.assert_not_called()

    def test_bench_progress_bar_needs_tqdm(self):
        self.on_a_terminal()
        self.without("tqdm")
        code, out, err = self.run_main(cli.main, "bench", "--pool-math-only")
        self.assertEqual(2, code)
        self.assertEqual(
            ["murano-cidr: error: murano-cidr bench needs tqdm, which is "
             "not installed; run 'pip install murano-cidr[bench]'"],
            err.splitlines())
        self.bench_run.assert_not_called()
