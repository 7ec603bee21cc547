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

"""Every installed driver against the driver contract.

The scenarios come from the ``murano_cidr.allocators`` entry points, each
in the class of what the driver announces (state kept or not), so a driver
shipped here joins by its entry point alone. Each runs after its
``prepare`` hook, under the test's own ``state_path`` (the ``lock``
driver's file locks).
"""

import testscenarios

from murano_cidr.engine.drivers import capabilities
from murano_cidr.operator.drivers import commands as driver_commands
from murano_cidr.tests import base
from murano_cidr.tests import contract

load_tests = testscenarios.load_tests_apply_scenarios


def prepare_db(test):
    """Point the db driver at a new SQLite database, with its tables.

    Once per test: a second driver of the test shares the first one's.
    """
    if getattr(test, "database", None) is None:
        test.database = test.use_database("sqlite", test.config_fixture,
                                          sync=True)


#: What a scenario needs beyond its driver's defaults.
_EXTRA = {"db": {"prepare": prepare_db},
          "lock": {"keeps_confirmed": False}}


def _scenarios(keeps_state):
    return [(name, dict(_EXTRA.get(name, {}), driver_name=name))
            for name, driver in driver_commands.driver_classes().items()
            if driver.has(capabilities.Capability.KEEPS_STATE)
            == keeps_state]


class TestStatelessDrivers(contract.StatelessContractTests, base.TestCase):

    scenarios = _scenarios(keeps_state=False)


class TestStatefulDrivers(contract.StatefulContractTests, base.TestCase):

    scenarios = _scenarios(keeps_state=True)


class TestScenarios(base.TestCase):

    def test_every_shipped_driver_is_a_scenario(self):
        self.assertEqual(
            ({"legacy", "random"}, {"db", "lock"}),
            ({name for name, _ in TestStatelessDrivers.scenarios},
             {name for name, _ in TestStatefulDrivers.scenarios}))
