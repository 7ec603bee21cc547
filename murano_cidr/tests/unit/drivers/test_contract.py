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

"""Every driver shipped with murano-cidr against the driver contract.

A new driver joins by adding a scenario to the class of what it
announces: state kept or not.
"""

import testscenarios

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


class TestStatelessDrivers(contract.StatelessContractTests, base.TestCase):

    scenarios = [
        ("random", {"driver_name": "random"}),
        ("legacy", {"driver_name": "legacy"}),
    ]


class TestStatefulDrivers(contract.StatefulContractTests, base.TestCase):

    scenarios = [
        # File locks under <state_path>/locks: the test's own directory.
        ("lock", {"driver_name": "lock"}),
        ("db", {"driver_name": "db", "prepare": prepare_db}),
    ]
