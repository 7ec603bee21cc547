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

"""Capabilities: announced by each driver, required by the commands."""

import ast

import fixtures

from murano_cidr.engine import allocator
from murano_cidr.engine.drivers import base as driver_base
from murano_cidr.engine.drivers import capabilities
from murano_cidr.engine.drivers.db import api
from murano_cidr.engine.drivers.db import driver as db_driver
from murano_cidr.engine.drivers.lock import driver as lock_driver
from murano_cidr.engine.drivers import random as random_driver
from murano_cidr import exceptions
from murano_cidr.tests import base

Capability = capabilities.Capability


class TestCapabilities(base.TestCase):

    def test_has_reads_the_capabilities_on_classes_and_drivers(self):
        self.assertTrue(db_driver.DbDriver.has(Capability.SHARES_STATE))
        self.assertTrue(
            lock_driver.LockDriver.has(Capability.HOLDS_RESERVATIONS))
        self.assertFalse(lock_driver.LockDriver.has(Capability.SHARES_STATE))
        self.assertFalse(
            random_driver.RandomDriver.has(Capability.KEEPS_STATE))
        self.config(driver="random")
        driver = allocator.get_allocator(self.conf)
        self.assertFalse(driver.has(Capability.PREVENTS_COLLISIONS))
        self.assertTrue(driver.has(Capability.OUTLIVES_PROCESS))

    def test_missing_capability_is_refused_before_the_driver_is_built(self):
        self.config(driver="lock")
        built = self.useFixture(fixtures.MockPatch(
            "murano_cidr.engine.drivers.lock.driver.LockDriver.__init__",
            return_value=None))
        e = self.assertRaises(
            exceptions.CapabilityMissing, allocator.get_allocator,
            self.conf, require=[Capability.KEEPS_STATE,
                                Capability.SHARES_STATE],
            action="list allocations")
        self.assertIsInstance(e, exceptions.NotSupported)
        self.assertEqual("shares_state", e.kwargs["capability"])
        self.assertTrue(str(e).startswith(
            "The lock driver cannot list allocations: it keeps only the "
            "reservations in flight"), str(e))
        built.mock.assert_not_called()

    def test_default_reason_and_action(self):
        self.config(driver="random")
        e = self.assertRaises(exceptions.CapabilityMissing,
                              allocator.get_allocator, self.conf,
                              require=Capability.PREVENTS_COLLISIONS)
        self.assertEqual("The random driver cannot prevent collisions: it "
                         "makes collisions rarer, not impossible", str(e))

    def test_present_capabilities_pass(self):
        self.config(driver="random")
        driver = allocator.get_allocator(
            self.conf, require=(Capability.OUTLIVES_PROCESS,))
        self.assertIsInstance(driver, random_driver.RandomDriver)

    def test_require_takes_capabilities_only(self):
        self.assertRaises(TypeError, driver_base.AllocatorDriver.require,
                          ["keeps_state"])

    def test_every_capability_has_a_reason_and_an_action(self):
        for capability in Capability:
            self.assertIn(capability, capabilities.DEFAULT_REASONS)
            self.assertIn(capability, capabilities.DEFAULT_ACTIONS)


class TestImportCycle(base.TestCase):

    def test_the_database_module_never_imports_the_migrations(self):
        # migration imports api, never the reverse: not even inside a
        # function.
        with open(api.__file__) as f:
            tree = ast.parse(f.read())
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                imported.update("%s.%s" % (node.module, alias.name)
                                for alias in node.names)
        self.assertIn("murano_cidr.exceptions", imported)
        self.assertNotIn("murano_cidr.operator.drivers.db.migration", imported)
