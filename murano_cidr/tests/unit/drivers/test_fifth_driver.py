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

"""A fifth driver joins by its own module and entry points, nothing else.

:class:`ToyDriver` is a driver as a third party would write it: its options
(:func:`list_toy_opts`), its status check (:class:`ToyCommands`) and its
capabilities are its own. The test installs it the way ``setup.cfg`` would
(entry points in a distribution's metadata, on ``sys.path``) and finds it
in the sample configuration, in ``murano-cidr-status upgrade check``, in
the commands and in the contract suite, without any other change to
murano-cidr.
"""

import io
import json
import os
import sys

import fixtures
from oslo_config import cfg
from oslo_config import generator
from oslo_upgradecheck import upgradecheck
from stevedore import extension as stevedore_extension
import testscenarios

from murano_cidr.engine import allocator
from murano_cidr.engine.drivers import capabilities
from murano_cidr.engine.drivers import installed
from murano_cidr.engine.drivers import stateless
from murano_cidr.operator.cmd import cli
from murano_cidr.operator.cmd import status
from murano_cidr.operator.drivers import commands
from murano_cidr.tests import base
from murano_cidr.tests import contract

load_tests = testscenarios.load_tests_apply_scenarios

TOY_GROUP = "cidr_allocator_toy"

toy_opts = [
    cfg.IntOpt("start", default=0, min=0,
               help="The candidate the toy driver tries first."),
]


def check_toy(conf):
    """The toy driver's status check: its start lies inside the pool."""
    if conf[TOY_GROUP].start > 1000:
        return upgradecheck.Result(upgradecheck.Code.WARNING,
                                   "start is far away.")
    return upgradecheck.Result(upgradecheck.Code.SUCCESS,
                               "The toy starts at %d." % conf[TOY_GROUP].start)


class ToyDriver(stateless.StatelessDriver):
    """The first free candidate at or after ``[cidr_allocator_toy] start``."""

    name = "toy"
    capabilities = frozenset({capabilities.Capability.OUTLIVES_PROCESS})
    extras = ()

    @classmethod
    def list_opts(cls):
        return list_toy_opts()

    def pick(self, owner, pool, free_map):
        return free_map.next_free(self.conf[TOY_GROUP].start)


def list_toy_opts():
    """The toy driver's options, for the sample configuration."""
    return [(TOY_GROUP, toy_opts)]


class ToyCommands(commands.DriverCommands):
    """The toy driver's command side: its status check."""

    @classmethod
    def upgrade_checks(cls):
        return [("Toy", check_toy)]


class ToyEntryPoint(fixtures.Fixture):
    """Install :class:`ToyDriver` as setup.cfg would: entry points."""

    def _setUp(self):
        site = self.useFixture(fixtures.TempDir()).path
        dist_info = os.path.join(site, "murano_cidr_toy-1.0.dist-info")
        os.makedirs(dist_info)
        with open(os.path.join(dist_info, "METADATA"), "w") as f:
            f.write("Metadata-Version: 2.1\nName: murano-cidr-toy\n"
                    "Version: 1.0\n")
        with open(os.path.join(dist_info, "entry_points.txt"), "w") as f:
            f.write("[murano_cidr.allocators]\ntoy = {0}:ToyDriver\n"
                    "[murano_cidr.allocator_opts]\ntoy = {0}:list_toy_opts\n"
                    "[murano_cidr.allocator_commands]\n"
                    "toy = {0}:ToyCommands\n".format(__name__))
        self.useFixture(fixtures.MonkeyPatch("sys.path",
                                             sys.path + [site]))
        # NOTE: stevedore remembers each namespace's entry points per
        # process; forget them so that the new distribution is seen, and
        # forget it again afterwards.
        self.useFixture(fixtures.MonkeyPatch(
            "stevedore.ExtensionManager.ENTRY_POINT_CACHE", {}))
        # NOTE: stevedore before 3 (Ussuri's 1.32) reads entry points
        # through pkg_resources, whose working set was built at import.
        pkg_resources = getattr(stevedore_extension, "pkg_resources", None)
        if pkg_resources is not None:
            self.useFixture(fixtures.MonkeyPatch(
                "pkg_resources.iter_entry_points",
                pkg_resources.WorkingSet(sys.path).iter_entry_points))


class ToyTestCase(base.TestCase):

    def setUp(self):
        self.useFixture(ToyEntryPoint())
        super().setUp()


class TestToyDriver(ToyTestCase):

    def test_it_is_installed(self):
        self.assertIn("toy", installed.names())
        self.config(driver="toy")
        self.config_fixture.config(group=TOY_GROUP, start=2)
        driver = allocator.get_allocator(self.conf)
        self.assertIsInstance(driver, ToyDriver)
        self.assertEqual("10.0.2.0/24", driver.allocate("net-1"))

    def test_its_options_are_in_the_sample_configuration(self):
        self.assertIn(TOY_GROUP, [group if isinstance(group, str)
                                  else group.name
                                  for group, _ in commands.list_opts()])
        conf = cfg.ConfigOpts()
        generator.register_cli_opts(conf)
        conf(["--namespace", "murano_cidr"], default_config_files=[])
        out = io.StringIO()
        generator.generate(conf, output_file=out)
        sample = out.getvalue()
        self.assertIn("[%s]" % TOY_GROUP, sample)
        self.assertIn("The candidate the toy driver tries first.", sample)
        self.assertIn("[cidr_allocator_database]", sample)

    def test_its_options_are_registered_with_the_others(self):
        conf = cfg.ConfigOpts()
        commands.register_opts(conf)
        self.assertEqual(0, conf[TOY_GROUP].start)

    def test_its_checks_run_in_murano_cidr_status(self):
        path = os.path.join(self.state_path, "murano-cidr.conf")
        with open(path, "w") as f:
            f.write("[cidr_allocator]\ndriver = toy\nstate_path = %s\n"
                    "[%s]\nstart = 5000\n" % (self.state_path, TOY_GROUP))
        code, out, _err = self.run_main(status.main, "--config-file", path,
                                        "upgrade", "check", "--json")
        results = {c["check"]: (c["result"], c["details"])
                   for c in json.loads(out)["checks"]}
        self.assertEqual((1, "start is far away."), results["Toy"])
        self.assertEqual(1, code)
        self.assertIn("Not used by driver 'toy'", results["Database"][1])

    def test_its_checks_are_skipped_for_other_drivers(self):
        self.config(driver="random")
        result = status.Checks(self.conf).run("Toy")
        self.assertEqual(upgradecheck.Code.SUCCESS, result.code)
        self.assertEqual("Not used by driver 'random'.", result.details)

    def test_the_commands_use_its_capabilities(self):
        path = os.path.join(self.state_path, "murano-cidr.conf")
        with open(path, "w") as f:
            f.write("[cidr_allocator]\ndriver = toy\nstate_path = %s\n"
                    "pool_cidrs = 10.20.0.0/22\nsubnet_prefixlen = 24\n"
                    % self.state_path)
        code, out, _err = self.run_main(cli.main, "--config-file", path,
                                        "allocate", "net-1")
        self.assertEqual((0, "10.20.0.0/24\n"), (code, out))
        code, _out, err = self.run_main(cli.main, "--config-file", path,
                                        "list")
        self.assertEqual(1, code)
        self.assertIn("The toy driver cannot list allocations", err)


class TestToyContract(contract.StatelessContractTests, ToyTestCase):

    scenarios = [("toy", {"driver_name": "toy"})]
