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

"""The ``murano-cidr`` console script: output, errors and exit codes."""

import os
import subprocess
import sys

import netaddr
from oslo_config import cfg

from murano_cidr.operator.cmd import cli
from murano_cidr.operator.cmd import common
from murano_cidr.tests import base


class CliTestCase(base.TestCase):

    def write_config(self, text):
        path = os.path.join(self.state_path, "murano-cidr.conf")
        with open(path, "w") as f:
            f.write("[cidr_allocator]\nstate_path = %s\n%s"
                    % (self.state_path, text))
        return path

    def run_cli(self, *args):
        return self.run_main(cli.main, *args)


class TestCli(CliTestCase):

    def test_allocate_with_random(self):
        conf = self.write_config("driver = random\nmax_environments = 20\n")
        code, out, err = self.run_cli("--config-file", conf, "allocate",
                                      "net-1", "--scope", "router-1",
                                      "--taken", "10.0.0.0/20")
        self.assertEqual((0, ""), (code, err))
        net = netaddr.IPNetwork(out.strip())
        self.assertIn(net, netaddr.IPNetwork("10.0.16.0/20"))
        self.assertEqual(24, net.prefixlen)

    def test_unknown_driver_lists_installed_ones(self):
        conf = self.write_config("driver = nope\n")
        code, out, err = self.run_cli("--config-file", conf, "allocate", "x")
        self.assertEqual(2, code)
        self.assertEqual("", out)
        self.assertEqual(1, len(err.splitlines()), err)
        self.assertIn("installed drivers:", err)
        self.assertIn("random", err)

    def test_exhausted_pool_is_one_line_and_exit_1(self):
        conf = self.write_config("driver = legacy\nmax_environments = 20\n")
        code, out, err = self.run_cli("--config-file", conf, "allocate",
                                      "net-1", "--scope", "R",
                                      "--taken", "10.0.0.0/19")
        self.assertEqual(1, code)
        self.assertEqual(
            "murano-cidr: error: pool 10.0.0.0/19 has no free /24 for scope "
            "R (32 subnets: 0 allocated, 32 taken)\n", err)

    def test_bad_option_names_it(self):
        conf = self.write_config("driver = random\nmax_environments = 0\n")
        code, _out, err = self.run_cli("--config-file", conf, "allocate",
                                       "x")
        self.assertEqual(2, code)
        self.assertIn("[cidr_allocator] max_environments", err)

    def test_bad_option_value_is_one_line_naming_group_and_file(self):
        conf = self.write_config("driver = random\nmax_environments = many\n")
        code, out, err = self.run_cli("--config-file", conf, "allocate",
                                      "x")
        self.assertEqual((2, ""), (code, out))
        self.assertEqual(
            "murano-cidr: error: option max_environments in "
            "[cidr_allocator]: invalid literal for int() with base 10: "
            "'many' (%s)\n" % conf, err)

    def test_bad_option_value_in_another_group(self):
        conf = self.write_config("driver = db\n[cidr_allocator_database]\n"
                                 "max_pool_size = -3\n")
        code, _out, err = self.run_cli("--config-file", conf, "allocate",
                                       "x")
        self.assertEqual(2, code)
        self.assertIn("error: option max_pool_size in "
                      "[cidr_allocator_database]: ", err)
        self.assertNotIn("LocationInfo", err)

    def test_describe_config_error(self):
        e = cfg.ConfigFileValueError(
            "Value for option x is not valid: bad\nvalue")
        self.assertEqual("option x: bad value",
                         common.describe_config_error(e))
        e = cfg.ConfigFilesNotFoundError(["/nope.conf"])
        self.assertEqual("Failed to find some config files: /nope.conf",
                         common.describe_config_error(e))

    def test_unsynced_database_is_a_setup_error(self):
        conf = self.write_config(
            "driver = db\n[cidr_allocator_database]\n"
            "connection = sqlite:///%s/unsynced.sqlite\n" % self.state_path)
        code, out, err = self.run_cli("--config-file", conf, "allocate",
                                      "x")
        self.assertEqual((2, ""), (code, out))
        self.assertEqual(1, len(err.splitlines()), err)
        self.assertIn("db sync", err)

    def test_bad_taken_is_a_usage_error(self):
        conf = self.write_config("driver = random\n")
        code, _out, err = self.run_cli("--config-file", conf, "allocate",
                                       "x", "--taken", "10.0.0.0/99")
        self.assertEqual(2, code)
        self.assertIn("10.0.0.0/99", err)

    def test_taken_with_host_bits_is_a_usage_error(self):
        # Issue 32: accepted as the whole /16, then "256 taken".
        conf = self.write_config("driver = random\n")
        for command in (["allocate", "x"], ["usage", "--scope", "r"]):
            code, out, err = self.run_cli("--config-file", conf, *command,
                                          "--taken", "10.0.0.5/16")
            self.assertEqual((2, ""), (code, out), err)
            self.assertEqual(1, len(err.splitlines()), err)
            self.assertIn("Invalid CIDR '10.0.0.5/16' in --taken: it has "
                          "host bits set; did you mean 10.0.0.0/16?", err)
            code, out, err = self.run_cli("--config-file", conf, *command,
                                          "--taken", "10.0.0.5")
            self.assertEqual((2, ""), (code, out), err)
            self.assertIn("Invalid CIDR '10.0.0.5' in --taken: it has no "
                          "prefix length", err)

    def test_stateless_list_says_why(self):
        conf = self.write_config("driver = random\n")
        code, _out, err = self.run_cli("--config-file", conf, "list")
        self.assertEqual(1, code)
        self.assertIn("keeps no state", err)

    def test_release_on_stateless_driver(self):
        conf = self.write_config("driver = random\n")
        code, out, _err = self.run_cli("--config-file", conf, "release",
                                       "net-1")
        self.assertEqual((0, "net-1 held nothing\n"), (code, out))


class TestCliProcess(CliTestCase):

    def _run(self, *args):
        return subprocess.run(
            [sys.executable, "-m", "murano_cidr.operator.cmd.cli"]
            + list(args),
            capture_output=True, text=True, timeout=60)

    def test_no_traceback_without_debug(self):
        conf = self.write_config("driver = random\nenv_ip_template = x\n")
        result = self._run("--config-file", conf, "allocate", "net-1")
        self.assertEqual(2, result.returncode)
        self.assertNotIn("Traceback", result.stderr)
        self.assertEqual(1, len(result.stderr.splitlines()), result.stderr)

    def test_debug_shows_the_traceback(self):
        conf = self.write_config("driver = random\nenv_ip_template = x\n")
        result = self._run("--config-file", conf, "--debug", "allocate",
                           "net-1")
        self.assertNotEqual(0, result.returncode)
        self.assertIn("Traceback", result.stderr)
        self.assertIn("InvalidConfig", result.stderr)
