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

"""Each Murano process that loads package-type plugins, with and without us.

Murano's package-type loader (restated in
:func:`murano_cidr.tests.murano_engines.load_package_type_plugins`) runs in
the engine, in the API's package upload and in ``murano-manage
import-package``; package listing loads no plugin. The engine and the API
register ``[murano]``; ``murano-manage`` does not. Each test runs the
loader as that process has it, once with murano-cidr's entry point and
once without it (murano-cidr uninstalled), with the entry points of each
branch's stevedore (``murano_engines.LOADERS``: Ussuri's name their
distribution, later ones do not); the loaders' table of
doc/source/integration/murano.rst, row by row.
"""

from unittest import mock

import fixtures
from oslo_config import cfg
from stevedore import extension
import testscenarios

from murano_cidr.engine.integration import plugin
from murano_cidr.tests import murano_engines
from murano_cidr.tests.unit.integration import test_plugin

load_tests = testscenarios.load_tests_apply_scenarios

ACTIVE = "[cidr_allocator]\ndriver = random\n"
MISSING_DIST = "'EntryPoint' object has no attribute 'dist'"


def _without_murano_cidr(manager, *args, **kwargs):
    return [entry_point for entry_point in _LIST(manager, *args, **kwargs)
            if not murano_engines.entry_point_target(
                entry_point).startswith("murano_cidr")]


_LIST = extension.ExtensionManager.list_entry_points


class LoaderTestCase(test_plugin.PluginTestCase):

    scenarios = [(name, {"dist": dist})
                 for name, dist in murano_engines.LOADERS]

    def uninstalled(self):
        """Hide murano-cidr's entry points, as if it was uninstalled."""
        patcher = mock.patch.object(extension.ExtensionManager,
                                    "list_entry_points", _without_murano_cidr)
        patcher.start()
        self.addCleanup(patcher.stop)

    def manage_conf(self):
        """murano-manage's global CONF: its file read, no [murano]."""
        self.useFixture(fixtures.MockPatchObject(cfg, "CONF",
                                                 cfg.ConfigOpts()))
        self.configure(ACTIVE)
        return cfg.CONF

    def assertEveryPackageLoadFails(self, load, *args):
        # Murano's failure callback raises, and with it the loader.
        e = self.assertRaises(AttributeError, load, *args)
        self.assertIn(MISSING_DIST, str(e))


class TestEngine(LoaderTestCase):

    def test_the_plugin_is_loaded_and_routes_the_pick(self):
        self.configure(ACTIVE)
        self.assertEqual(([plugin.FORMAT], []), self.load())
        self.assertEqual(plugin.INSTALLED, plugin.install())
        self.assertTrue(hasattr(self.explorer, "confirm_cidr"))

    def test_without_murano_cidr(self):
        self.uninstalled()
        self.configure(ACTIVE)
        self.assertEqual(([], []), self.load())
        self.assertUnchanged()

    def test_enabled_plugins_naming_murano_cidr(self):
        self.configure(ACTIVE + "[murano]\nenabled_plugins = murano-cidr\n")
        if self.dist == murano_engines.DIST_NAMED:
            self.assertEqual(([plugin.FORMAT], []), self.load())
            self.assertTrue(hasattr(self.explorer, "confirm_cidr"))
        elif self.dist == murano_engines.DIST_MISSING:
            self.assertEveryPackageLoadFails(self.load)
        else:
            self.assertEqual([plugin.FORMAT],
                             [name for name, _ in self.load()[1]])
            self.assertUnchanged()

    def test_enabled_plugins_without_murano_cidr(self):
        self.configure(ACTIVE + "[murano]\nenabled_plugins = other\n")
        if self.dist == murano_engines.DIST_MISSING:
            self.assertEveryPackageLoadFails(self.load)
            return
        initialised, failures = self.load()
        self.assertEqual([], initialised)
        # Ussuri's loader leaves it out; a later one fails to read it.
        self.assertEqual(self.dist == murano_engines.DIST_NONE,
                         bool(failures))
        self.assertUnchanged()


class TestApiPackageUpload(LoaderTestCase):

    def setUp(self):
        super().setUp()
        # The API process: no engine, so no NetworkExplorer loaded.
        self.modules({plugin.EXPLORER_MODULE: None})

    def test_loads_and_changes_nothing(self):
        self.configure(ACTIVE)
        self.assertEqual(([plugin.FORMAT], []), self.load())
        self.assertEqual(plugin.NO_ENGINE, plugin.install())

    def test_without_a_driver(self):
        self.configure("")
        self.assertEqual(([plugin.FORMAT], []), self.load())
        self.assertEqual(plugin.UNCONFIGURED, plugin.install())

    def test_without_murano_cidr(self):
        self.uninstalled()
        self.configure(ACTIVE)
        self.assertEqual(([], []), self.load())


class TestMuranoManage(LoaderTestCase):

    def test_import_package(self):
        conf = self.manage_conf()
        self.assertRaises(cfg.NoSuchOptError, getattr, conf, "murano")
        if self.dist == murano_engines.DIST_MISSING:
            # Victoria to 2023.2 on Python 3.8 and 3.9: murano-manage fails
            # (murano.rst: re-import through the API).
            self.assertEveryPackageLoadFails(self.load_with, conf)
            return
        # The check fails, the callback warns, and the import goes on
        # without the plugin, as without murano-cidr.
        initialised, failures = self.load_with(conf)
        self.assertEqual([], initialised)
        self.assertEqual([plugin.FORMAT], [name for name, _ in failures])

    def test_import_package_without_murano_cidr(self):
        conf = self.manage_conf()
        self.uninstalled()
        self.assertEqual(([], []), self.load_with(conf))

    def load_with(self, conf):
        return murano_engines.load_package_type_plugins(conf, self.dist)
