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

"""Rolling back, row by row of the Murano integration guide.

A ``NeutronNetwork`` (the class file of test_core_library, changed by
``patch-core-library`` or not) is deployed and deleted by the MuranoPL
stand-in (:mod:`murano_cidr.tests.muranopl`, real yaql) in a stand-in
engine: the stock ``NetworkExplorer`` of Train to 2023.2, its plugins
loaded (or not) by the stand-in of Murano's package-type loader from the
engine's configuration, with the entry points of each branch's stevedore
(``murano_engines.LOADERS``). Each engine is a fresh process: a fresh
class, the plugin's outcome forgotten.
"""

from unittest import mock

import fixtures
import testscenarios

from murano_cidr.engine.integration import murano as adapter
from murano_cidr.engine.integration import plugin
from murano_cidr.operator import muranopl_patch
from murano_cidr.tests import murano_engines
from murano_cidr.tests import muranopl
from murano_cidr.tests.unit.integration import test_core_library as texts
from murano_cidr.tests.unit.integration import test_plugin

load_tests = testscenarios.load_tests_apply_scenarios

EXPLORER = "io.murano.system.NetworkExplorer"
OBJECT_ID = "0f3a9c1e5b7d4e2a8c6b1d3f5a7e9c20"

#: The engine's configuration in each row (None: murano-cidr uninstalled).
ACTIVE = "[cidr_allocator]\ndriver = random\n"
NOT_ENABLED = ACTIVE + "[murano]\nenabled_plugins = other-plugin\n"
ROWS = {
    "driver unset": "[cidr_allocator]\n",
    "murano-cidr uninstalled": None,
    "murano-cidr not in enabled_plugins": NOT_ENABLED,
}


def _rows():
    # Where the entry points have no dist (Victoria to 2023.2 on Python
    # 3.8 and 3.9) no package loads with enabled_plugins set (see
    # test_enabled_plugins_fail_every_package_load_without_dist).
    for loader, dist in murano_engines.LOADERS:
        for row, conf_text in sorted(ROWS.items()):
            if conf_text != NOT_ENABLED or (
                    dist != murano_engines.DIST_MISSING):
                yield "%s, %s" % (row, loader), {"conf_text": conf_text,
                                                 "dist": dist}


class RollbackTestCase(test_plugin.PluginTestCase):

    def setUp(self):
        super().setUp()
        self.confirmed, self.released, self.pushed = [], [], []
        self.useFixture(fixtures.MockPatchObject(
            adapter, "confirm_cidr", side_effect=self.confirmed.append))
        self.useFixture(fixtures.MockPatchObject(
            adapter, "release_cidr", side_effect=self.released.append))
        self.attributes = {}
        root = self.useFixture(fixtures.TempDir()).path
        self.package = texts.make_tree(root)

    def library(self, form):
        """The class file: ``changed``, ``1.x`` (unguarded), ``reverted``."""
        if form == "1.x":
            return texts.UNGUARDED
        muranopl_patch.change(self.package)
        if form == "reverted":
            muranopl_patch.revert(self.package)
        with open(muranopl_patch.class_file(self.package), newline="") as f:
            return f.read()

    def start_engine(self, conf_text):
        """A fresh engine process with this configuration; its outcome."""
        plugin.reset()
        self.explorer = self.put_engine(
            murano_engines.build_stock_engine(self.family))
        if conf_text is None:
            return None
        self.configure(conf_text)
        initialised, _failures = self.load()
        # The outcome of the loader's init_plugin() call, if it made one.
        return plugin.install() if initialised else None

    def network(self, text):
        explorer = (lambda: muranopl.native(
            EXPLORER, self.explorer(mock.MagicMock(), "test-region")))
        return muranopl.Network(text, OBJECT_ID, explorer, self.pushed.append,
                                self.attributes, router_id=test_plugin.
                                ROUTER_ID)

    def deploy(self, text):
        self.network(text).run("deploy")
        return self.pushed[-1]["subnetCidr"]

    def delete(self, text):
        # NOTE: Murano runs .destroy on the object loaded again from the
        # object model: a new object, with the attributes kept.
        self.network(text).run(".destroy")


class TestEachRow(RollbackTestCase):
    """One row of the guide's rollback table, as a scenario.

    (Not subTest: testtools 2.4, Ussuri's to Wallaby's, has none.)
    """

    scenarios = list(_rows())

    def test_deploys_and_deletes_as_the_unchanged_library(self):
        for form in ("changed", "reverted"):
            del self.confirmed[:], self.released[:]
            self.attributes.clear()
            self.start_engine(self.conf_text)
            self.assertFalse(hasattr(self.explorer, "confirm_cidr"), form)
            cidr = self.deploy(self.library(form))
            self.assertEqual(self.own_pick(OBJECT_ID), cidr, form)
            self.delete(self.library(form))
            self.assertEqual(([], []), (self.confirmed, self.released), form)

    def test_the_unguarded_change_of_1_x_fails(self):
        # What the upgrade note's order avoids: patch-core-library again
        # (it replaces this form) before rolling back.
        self.start_engine(self.conf_text)
        e = self.assertRaises(muranopl.NoMethodFound, self.deploy,
                              self.library("1.x"))
        self.assertEqual('Unknown method "confirmCidr" for receiver '
                         '<%s>' % EXPLORER, str(e))


class TestRollbackRows(RollbackTestCase):

    def test_with_the_plugin_active_confirm_and_release_reach_it(self):
        text = self.library("changed")
        self.assertEqual(plugin.INSTALLED, self.start_engine(ACTIVE))
        cidr = self.deploy(text)
        self.assertNotIn(cidr, test_plugin.ON_ROUTER)
        self.assertEqual([OBJECT_ID], self.confirmed)
        self.delete(text)
        self.assertEqual([OBJECT_ID], self.released)

    def test_enabled_plugins_fail_every_package_load_without_dist(self):
        self.dist = murano_engines.DIST_MISSING
        self.assertRaises(AttributeError, self.start_engine, NOT_ENABLED)

    def test_on_ussuri_enabled_plugins_naming_murano_cidr_keeps_it(self):
        # Ussuri's loader reads the distribution: the list works there.
        self.dist = murano_engines.DIST_NAMED
        text = self.library("changed")
        self.assertEqual(plugin.INSTALLED, self.start_engine(
            ACTIVE + "[murano]\nenabled_plugins = murano-cidr\n"))
        self.deploy(text)
        self.delete(text)
        self.assertEqual(([OBJECT_ID], [OBJECT_ID]),
                         (self.confirmed, self.released))

    def test_an_explorer_the_plugin_does_not_know_is_left_unguarded(self):
        text = self.library("changed")
        plugin.reset()

        class Changed(murano_engines.build_stock_engine(self.family)):
            def get_default_dns(self, ip_version=4, extra=None):
                return []

        self.explorer = self.put_engine(Changed)
        self.configure(ACTIVE)
        self.assertEqual([plugin.FORMAT], self.load()[0])
        self.assertEqual(plugin.UNKNOWN_EXPLORER, plugin.install())
        self.assertEqual(self.own_pick(OBJECT_ID), self.deploy(text))
        self.delete(text)
        self.assertEqual(([], []), (self.confirmed, self.released))

    def test_deployed_with_the_plugin_deleted_after_the_rollback(self):
        text = self.library("changed")
        self.start_engine(ACTIVE)
        self.deploy(text)
        self.start_engine(ROWS["driver unset"])
        self.delete(text)
        self.assertEqual(([OBJECT_ID], []), (self.confirmed, self.released))

    def test_deployed_before_the_plugin_deleted_with_it(self):
        text = self.library("changed")
        self.start_engine(ROWS["murano-cidr uninstalled"])
        self.deploy(text)
        self.assertEqual(plugin.INSTALLED, self.start_engine(ACTIVE))
        self.delete(text)
        # Releasing what murano-cidr never allocated is not an error.
        self.assertEqual(([], [OBJECT_ID]), (self.confirmed, self.released))
