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
loader as that process has it, with ``[murano] enabled_plugins`` unset,
once with murano-cidr's entry point and once without it (murano-cidr
uninstalled), on the Python running the tests: tox's floor jobs run them on
3.8, the others on 3.10 and later.
"""

from unittest import mock

import fixtures
from oslo_config import cfg
from stevedore import extension

from murano_cidr.integration import plugin
from murano_cidr.tests import murano_engines
from murano_cidr.tests.unit.integration import test_plugin

ACTIVE = "[cidr_allocator]\ndriver = random\n"


def _without_murano_cidr(manager, *args, **kwargs):
    return [entry_point for entry_point in _LIST(manager, *args, **kwargs)
            if not murano_engines.entry_point_target(
                entry_point).startswith("murano_cidr")]


_LIST = extension.ExtensionManager.list_entry_points


class LoaderTestCase(test_plugin.PluginTestCase):

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
        if murano_engines.ENTRY_POINTS_HAVE_DIST:
            # Stevedore before 3 (Ussuri), or Python 3.10 on: the check
            # fails, the callback warns, and the import goes on without the
            # plugin, as without murano-cidr.
            initialised, failures = self.load_with(conf)
            self.assertEqual([], initialised)
            self.assertEqual([plugin.FORMAT], [name for name, _ in failures])
        else:
            # Python 3.8 and 3.9: Murano's failure callback raises, and
            # murano-manage fails (murano.rst: re-import through the API).
            e = self.assertRaises(AttributeError, self.load_with, conf)
            self.assertIn("'EntryPoint' object has no attribute 'dist'",
                          str(e))

    def test_import_package_without_murano_cidr(self):
        conf = self.manage_conf()
        self.uninstalled()
        self.assertEqual(([], []), self.load_with(conf))

    def load_with(self, conf):
        return murano_engines.load_package_type_plugins(conf)
