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

"""A test case with a migrated SQLite allocation database."""

from murano_cidr.engine import allocator
from murano_cidr.engine.drivers.db import options as db_options
from murano_cidr.tests import base
from murano_cidr.tests import db_fixture


class DbTestCase(base.TestCase):
    """Each test has its own SQLite file, migrated to head."""

    def setUp(self):
        super().setUp()
        self.database = self.use_database(db_fixture.SQLITE,
                                          self.config_fixture, sync=True)
        self.db_path = self.database.engine.url.database
        self.db_config(sqlite_synchronous=False)

    def db_config(self, **kwargs):
        """Override ``[cidr_allocator_database]`` options for this test."""
        self.config_fixture.config(group=db_options.GROUP, **kwargs)

    def make_driver(self, **overrides):
        """Build the db driver with ``[cidr_allocator]`` overrides."""
        settings = {"driver": "db", "pool_cidrs": ["10.20.0.0/22"],
                    "subnet_prefixlen": 24}
        settings.update(overrides)
        self.config(**settings)
        driver = allocator.get_allocator(self.conf)
        self.addCleanup(driver.close)
        return driver
