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

"""``murano-cidr simulate``'s command line, with the runner mocked."""

import argparse
import os

import fixtures

from murano_cidr.measuring.simulate import model
from murano_cidr.measuring.simulate import runner
from murano_cidr.operator.cmd import cli
from murano_cidr.operator.cmd import simulate
from murano_cidr.tests import base


class TestSimulateCommand(base.TestCase):

    def simulate(self, results, *args):
        run = self.useFixture(fixtures.MockPatchObject(
            runner.Runner, "run", return_value=results)).mock
        code, out, err = self.run_main(
            cli.main, "simulate", "--drivers", "legacy,lock", "-k", "2",
            "--trials", "5", "--quiet", *args)
        return code, out, err, run

    def test_success(self):
        code, out, err, run = self.simulate([
            model.Result("legacy", 2, 5, 256, 0, collided=1),
            model.Result("lock", 2, 5, 256, 0)])
        self.assertEqual((0, ""), (code, err))
        run.assert_called_once_with()
        self.assertIn("20.0%", out)

    def test_failed_trials_exit_1_naming_driver_and_error(self):
        code, out, err, _run = self.simulate([
            model.Result("legacy", 2, 5, 256, 0, collided=1),
            model.Result("lock", 2, 5, 256, 0, errors=5,
                         first_error="LockUnavailable: refused")])
        self.assertEqual(1, code)
        self.assertEqual(
            ["murano-cidr: error: driver lock failed in 5 of 5 trial(s) "
             "at K=2, left out of its collision rate; first error: "
             "LockUnavailable: refused"], err.splitlines())
        # The table is still printed, with no rate for the failed driver.
        self.assertIn("n/a", out)

    def test_too_many_engines(self):
        code, out, err, run = self.simulate([], "-k", "2,65")
        self.assertEqual(2, code)
        self.assertIn("at most 64", err)
        run.assert_not_called()

    def test_unwritable_plot_directory_fails_before_the_run(self):
        path = os.path.join(self.state_path, "missing", "p.png")
        code, _out, err, run = self.simulate([], "--plot", path)
        self.assertEqual(2, code)
        errors = [line for line in err.splitlines() if "error:" in line]
        self.assertEqual(1, len(errors), err)
        self.assertIn("missing does not exist", errors[0])
        run.assert_not_called()

    def test_plot_path_checks(self):
        simulate.check_plot_path(os.path.join(self.state_path, "p.png"))
        e = self.assertRaises(ValueError, simulate.check_plot_path,
                              self.state_path)
        self.assertIn("is a directory", str(e))
        # NOTE: os.access is mocked, as root may write anywhere.
        self.useFixture(fixtures.MockPatch("os.access", return_value=False))
        e = self.assertRaises(ValueError, simulate.check_plot_path,
                              os.path.join(self.state_path, "p.png"))
        self.assertIn("is not writable", str(e))

    def test_int_list(self):
        self.assertEqual([2, 5, 10], simulate.int_list("2, 5,10,"))
        e = self.assertRaises(argparse.ArgumentTypeError, simulate.int_list,
                              "2,x")
        self.assertIn("'2,x'", str(e))

    def test_bad_k_is_a_usage_error(self):
        e = self.assertRaises(SystemExit, self.run_main, cli.main,
                              "simulate", "-k", "two")
        self.assertEqual(2, e.code)
