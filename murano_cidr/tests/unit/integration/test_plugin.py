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

"""The engine plugin, loaded through its entry point as Murano loads it.

Each branch family's stand-in ``NetworkExplorer``, as Murano ships it (its
own pick, no ``confirm_cidr``), is put where Murano's engine keeps it
(``murano.engine.system.net_explorer``); the plugin is then loaded by the
stand-in of Murano's package-type loader, through the installed entry
point, with the engine's configuration in the global ``cfg.CONF``.
"""

import logging
import os
import sys
from unittest import mock

import fixtures
from oslo_config import cfg
from oslo_config import fixture as config_fixture
from stevedore import extension
import tenacity
import testscenarios

from murano_cidr.engine.drivers.db import driver as db_driver
from murano_cidr.engine.integration import murano as adapter
from murano_cidr.engine.integration import plugin
from murano_cidr import exceptions
from murano_cidr.operator.drivers import commands
from murano_cidr.operator.drivers.db import migration
from murano_cidr import opts
from murano_cidr.tests import base
from murano_cidr.tests import murano_engines
from murano_cidr.tests.unit.integration import test_murano as fakes
from murano_cidr.tests.unit import murano_reference

load_tests = testscenarios.load_tests_apply_scenarios

ROUTER_ID = 12
NET_ID = 144
ON_ROUTER = ["10.0.%d.0/24" % i for i in range(0, 256, 2)]


def known(family):
    """Tell whether the plugin knows a family, by its signatures."""
    return any(all(family.signatures.get(name) == signature
                   for name, signature in expected.items())
               for expected in plugin.KNOWN_EXPLORERS.values())


#: The family of every branch from Train to 2023.2 (the library installs
#: on Ussuri and later).
FAMILY = next(f for f in murano_engines.FAMILIES if known(f))


def _registered():
    return any(e.name == plugin.FORMAT for e in extension.ExtensionManager(
        murano_engines.PACKAGE_TYPES).extensions)


def require_entry_point(test):
    """Skip (laptop) or fail (CI) where the entry point is not installed.

    An editable install made before the entry point was added does not have
    it until ``pip install -e .`` is run again.
    """
    test.require_service(_registered(), "murano-cidr's %s entry point "
                         "(run pip install -e . again)"
                         % murano_engines.PACKAGE_TYPES)


class PluginTestCase(base.TestCase):
    """A stock stand-in engine in ``sys.modules``, and the global CONF."""

    family = FAMILY
    #: The branch's loader (murano_engines.LOADERS); None: the installed
    #: stevedore's.
    dist = None

    def setUp(self):
        super().setUp()
        require_entry_point(self)
        self.engine_conf = self.useFixture(config_fixture.Config(cfg.CONF))
        self.engine_conf.register_opts(murano_engines.NETWORKING_OPTS,
                                       group="networking")
        self.engine_conf.register_opts(murano_engines.MURANO_OPTS,
                                       group="murano")
        plugin.reset()
        self.addCleanup(plugin.reset)
        adapter.reset_shared_allocator()
        self.addCleanup(adapter.reset_shared_allocator)
        for name in ("nclient", "auth_utils", "helpers"):
            self.useFixture(fixtures.MockPatchObject(
                murano_engines, name, mock.MagicMock()))
        self.client = fakes.FakeNeutron(
            ports=[fakes.port(ROUTER_ID, "s%d" % i)
                   for i in range(len(ON_ROUTER))],
            subnets=[fakes.subnet("s%d" % i, c)
                     for i, c in enumerate(ON_ROUTER)])
        murano_engines.nclient.Client.return_value = self.client
        self.log = self.useFixture(fixtures.FakeLogger(
            name=plugin.__name__, level=logging.INFO))
        self.explorer = self.put_engine(
            murano_engines.build_stock_engine(self.family))

    def put_engine(self, explorer):
        """Make ``explorer`` Murano's ``NetworkExplorer`` for the test."""
        self.before = dict(vars(explorer))
        module = mock.NonCallableMagicMock(NetworkExplorer=explorer)
        self.modules({plugin.EXPLORER_MODULE: module})
        return explorer

    def modules(self, modules):
        patcher = mock.patch.dict(sys.modules, modules)
        patcher.start()
        self.addCleanup(patcher.stop)

    def configure(self, text):
        """Parse an engine configuration file into the global CONF."""
        path = os.path.join(self.state_path, "murano.conf")
        with open(path, "w") as f:
            f.write(text)
        cfg.CONF(args=[], project="murano", default_config_files=[path],
                 default_config_dirs=[])
        return path

    def configure_db(self, extra=""):
        path = self.configure(
            "[cidr_allocator]\ndriver = db\nstate_path = %s\n%s"
            "[cidr_allocator_database]\nconnection = sqlite:///%s/cidr.db\n"
            % (self.state_path, extra, self.state_path))
        # The migrations expect the db driver's options registered.
        db_driver.DbDriver.register_opts(cfg.CONF)
        migration.upgrade(cfg.CONF)
        return path

    def load(self):
        """Load the engine's plugins as Murano does."""
        return murano_engines.load_package_type_plugins(cfg.CONF, self.dist)

    def engine(self):
        return self.explorer(mock.MagicMock(), "test-region")

    def own_pick(self, net_id):
        available = murano_reference.candidates("10.0.0.0", 250, 250)
        return murano_reference.pick(available, ON_ROUTER, hash(net_id))

    def assertUnchanged(self):
        self.assertEqual(self.before, dict(vars(self.explorer)))
        self.assertFalse(hasattr(self.explorer, "confirm_cidr"))
        self.assertEqual(self.own_pick(NET_ID), self.engine()
                         .get_available_cidr(ROUTER_ID, NET_ID))

    def log_lines(self, text):
        return [line for line in self.log.output.splitlines()
                if text in line]


class TestConfigured(PluginTestCase):

    def test_the_engine_s_own_pick_goes_through_the_driver(self):
        path = self.configure_db()
        self.assertEqual(([plugin.FORMAT], []), self.load())
        engine = self.engine()
        cidr = engine.get_available_cidr(ROUTER_ID, NET_ID)
        self.assertNotIn(cidr, ON_ROUTER)
        held = adapter.shared_allocator().driver.get("144")
        self.assertEqual(("12", cidr, False),
                         (held.scope, held.cidr, held.confirmed))
        # MuranoPL calls it as before: the same signature.
        self.assertEqual(self.family.signatures["get_available_cidr"],
                         murano_engines.signature(self.explorer,
                                                  "get_available_cidr"))
        engine.confirm_cidr(NET_ID)
        self.assertTrue(adapter.shared_allocator().driver.get("144")
                        .confirmed)
        self.assertTrue(engine.release_cidr(NET_ID))
        self.assertIsNone(adapter.shared_allocator().driver.get("144"))
        (line,) = self.log_lines("murano-cidr")
        self.assertIn("now come from the db driver", line)
        self.assertIn(path, line)
        self.assertIn("train-2023.2", line)

    def test_confirm_never_raises_into_muranopl(self):
        self.configure_db()
        self.load()
        engine = self.engine()
        cidr = engine.get_available_cidr(ROUTER_ID, NET_ID)
        self.useFixture(fixtures.MockPatchObject(
            adapter.shared_allocator().driver, "confirm",
            side_effect=exceptions.ReservationLost(
                cidr=cidr, owner="144", reason="its lock expired")))
        self.assertIsNone(engine.confirm_cidr(NET_ID))
        self.assertEqual({"ReservationLost": 1},
                         dict(adapter.shared_allocator().confirm_failures))

    def test_once_per_process(self):
        self.configure_db()
        self.load()
        changed = dict(vars(self.explorer))
        self.assertEqual(([plugin.FORMAT], []), self.load())
        self.assertEqual(changed, dict(vars(self.explorer)))
        self.assertEqual(1, len(self.log_lines("murano-cidr")))

    def test_enabled_plugins_naming_murano_cidr(self):
        self.configure_db()
        self.engine_conf.config(enabled_plugins=["murano-cidr"],
                                group="murano")
        if murano_engines.ENTRY_POINTS_NAME_THEIR_PROJECT:
            # Stevedore before 3 (Ussuri's): Murano's own check finds the
            # distribution, and the plugin loads.
            self.assertEqual(([plugin.FORMAT], []), self.load())
            self.assertTrue(hasattr(self.explorer, "confirm_cidr"))
            return
        # Murano's own check needs the entry point's distribution, which
        # stevedore 3 and later do not give: the plugin fails to load,
        # nothing changes.
        if not murano_engines.ENTRY_POINTS_HAVE_DIST:
            # Python 3.8 and 3.9: Murano's failure callback fails too, and
            # with it every package load (murano-cidr-status says so).
            e = self.assertRaises(AttributeError, self.load)
            self.assertIn("'EntryPoint' object has no attribute 'dist'",
                          str(e))
            return
        initialised, failures = self.load()
        self.assertEqual([], initialised)
        self.assertEqual([plugin.FORMAT], [name for name, _ in failures])
        self.assertUnchanged()
        # Loaded by a loader that can tell, the plugin goes on.
        self.assertEqual(plugin.INSTALLED, plugin.install())
        self.assertTrue(hasattr(self.explorer, "confirm_cidr"))

    def test_enabled_plugins_without_murano_cidr(self):
        self.configure_db()
        self.engine_conf.config(enabled_plugins=["other-plugin"],
                                group="murano")
        plugin.EnginePlugin.init_plugin()
        self.assertUnchanged()
        self.assertEqual(1, len(self.log_lines("enabled_plugins")))

    def test_a_driver_that_is_not_installed_fails_deployments(self):
        self.configure("[cidr_allocator]\ndriver = no-such-driver\n")
        self.load()
        self.assertIn("no-such-driver", self.log.output)
        self.assertRaises(exceptions.DriverNotFound,
                          self.engine().get_available_cidr, ROUTER_ID,
                          NET_ID)

    def test_an_unexpected_failure_changes_nothing(self):
        self.configure_db()
        self.useFixture(fixtures.MockPatchObject(
            plugin, "_change", side_effect=RuntimeError("boom")))
        self.assertEqual(([plugin.FORMAT], []), self.load())
        self.assertUnchanged()
        self.assertIn("the engine plugin failed", self.log.output)


class TestUnconfigured(PluginTestCase):

    def test_no_driver_set_leaves_the_engine_as_it_was(self):
        self.configure("[cidr_allocator]\nmax_environments = 250\n")
        self.assertEqual(([plugin.FORMAT], []), self.load())
        self.assertUnchanged()
        self.assertEqual(plugin.UNCONFIGURED, plugin.install())
        (line,) = self.log_lines("murano-cidr")
        self.assertIn("[cidr_allocator] driver is not set", line)

    def test_a_default_set_by_code_is_not_a_choice(self):
        commands.register_opts(cfg.CONF)
        cfg.CONF.set_default("driver", "lock", group=opts.GROUP)
        self.addCleanup(cfg.CONF.clear_default, "driver", group=opts.GROUP)
        self.configure("")
        self.load()
        self.assertUnchanged()


class TestUnknownExplorer(PluginTestCase):

    def test_other_signatures_are_left_unchanged(self):
        class Changed(self.explorer):
            def get_available_cidr(self, router_id, net_id):
                return "192.0.2.0/24"

        self.put_engine(Changed)
        self.explorer = Changed
        self.configure_db()
        self.load()
        self.assertEqual(self.before, dict(vars(Changed)))
        self.assertEqual("192.0.2.0/24", self.engine().get_available_cidr(
            ROUTER_ID, NET_ID))
        (line,) = self.log_lines("murano-cidr")
        self.assertIn("left unchanged", line)
        self.assertIn("get_available_cidr(self, router_id, net_id) instead "
                      "of get_available_cidr(self, router_id, net_id, "
                      "ip_version=4)", line)

    def test_a_method_wrapped_by_a_retry_decorator_is_still_known(self):
        # Murano wraps get_default_router in tenacity.retry (Train onwards);
        # its signature is read through the wrapper.
        class Retrying(self.explorer):
            @tenacity.retry(stop=tenacity.stop_after_attempt(1),
                            reraise=True)
            def get_default_router(self):
                return "router"

        self.put_engine(Retrying)
        self.assertEqual((FAMILY.name, None), plugin.recognise(Retrying))
        self.configure_db()
        self.load()
        self.assertTrue(hasattr(Retrying, "confirm_cidr"))

    def test_an_explorer_patched_by_hand_is_left_unchanged(self):
        class Patched(self.explorer):
            def confirm_cidr(self, net_id):
                pass

        self.put_engine(Patched)
        self.configure_db()
        self.load()
        self.assertEqual(self.before, dict(vars(Patched)))
        self.assertIn("already has confirm_cidr", self.log.output)

    def test_no_engine_in_the_process(self):
        self.modules({plugin.EXPLORER_MODULE: None})
        self.configure_db()
        self.load()
        self.assertEqual(plugin.NO_ENGINE, plugin.install())
        self.assertIn("no Murano engine in this process", self.log.output)


class TestFamilies(PluginTestCase):
    """Every family's stock engine: only the known ones are changed."""

    scenarios = [(f.name, {"family": f}) for f in murano_engines.FAMILIES]

    def test_family(self):
        self.configure_db()
        self.load()
        changed = known(self.family)
        self.assertEqual(changed, hasattr(self.explorer, "confirm_cidr"))
        self.assertEqual(changed, self.before != dict(vars(self.explorer)))
        self.assertEqual(
            self.family.signatures["get_available_cidr"],
            murano_engines.signature(self.explorer, "get_available_cidr"))
        self.assertTrue(self.log_lines("left unchanged") or changed)


class TestRegistration(base.TestCase):

    def setUp(self):
        super().setUp()
        require_entry_point(self)

    def test_not_an_extension_of_murano_s_extension_loader(self):
        # Murano's io.murano.extensions loader reads the entry point's
        # distribution, which stevedore (3.0 and later) does not set: it
        # would fail every deployment. If stevedore ever sets it again, this
        # fails, and the registration can be reconsidered. (Ussuri's
        # stevedore 1.32 sets it; one registration serves every branch.)
        manager = extension.ExtensionManager(murano_engines.PACKAGE_TYPES)
        (ours,) = [e for e in manager.extensions
                   if e.name == plugin.FORMAT]
        self.assertIs(plugin.EnginePlugin, ours.plugin)
        dist = getattr(ours.entry_point, "dist", None)
        if murano_engines.ENTRY_POINTS_NAME_THEIR_PROJECT:
            self.assertEqual("murano-cidr", dist.project_name)
        else:
            self.assertIsNone(dist)
        self.assertEqual([], [
            e.name for e in extension.ExtensionManager(
                "io.murano.extensions").extensions
            if murano_engines.entry_point_target(
                e.entry_point).startswith("murano_cidr")])

    def test_every_branch_the_library_installs_on_is_known(self):
        branches = [b for f in murano_engines.FAMILIES if known(f)
                    for b in f.branches]
        for branch in ("ussuri", "victoria", "wallaby", "xena", "yoga",
                       "zed", "2023.1", "2023.2"):
            self.assertIn(branch, branches)

    def test_not_a_package_format(self):
        e = self.assertRaises(exceptions.InvalidArgument,
                              plugin.EnginePlugin, "murano-cidr-engine-"
                              "plugin", "1.0", "/tmp/package", {})
        self.assertIn("not a package format", str(e))

    def test_in_murano_a_package_of_this_format_is_murano_s_format_error(self):
        # Murano's loaders skip a package whose format they refuse (their
        # PackageLoadError); anything else escapes, and in the engine's
        # directory loader fails every deployment.
        class PackageLoadError(Exception):
            pass

        class PackageFormatError(PackageLoadError):
            pass

        murano_errors = mock.NonCallableMock(
            PackageLoadError=PackageLoadError,
            PackageFormatError=PackageFormatError)
        with mock.patch.dict(sys.modules, {
                "murano.packages.exceptions": murano_errors}):
            e = self.assertRaises(PackageLoadError, plugin.EnginePlugin,
                                  "murano-cidr-engine-plugin", "1.0",
                                  "/tmp/package", {})
        self.assertIn("not a package format", str(e))
        self.assertIsInstance(e.__cause__, exceptions.InvalidArgument)
