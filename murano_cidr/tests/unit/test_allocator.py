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

import fixtures

from murano_cidr.engine import allocator
from murano_cidr.engine.drivers import installed
from murano_cidr.engine.drivers import legacy
from murano_cidr.engine.drivers import random as random_driver
from murano_cidr import exceptions
from murano_cidr.tests import base


class TestGetAllocator(base.TestCase):

    def test_loads_the_configured_driver(self):
        self.config(driver="random")
        self.assertIsInstance(allocator.get_allocator(self.conf),
                              random_driver.RandomDriver)
        self.config(driver="legacy")
        self.assertIsInstance(allocator.get_allocator(self.conf),
                              legacy.LegacyDriver)

    def test_unknown_driver_lists_the_installed_ones(self):
        self.config(driver="nope")
        e = self.assertRaises(exceptions.DriverNotFound,
                              allocator.get_allocator, self.conf)
        self.assertIn("'nope'", str(e))
        for name in ("random", "legacy"):
            self.assertIn(name, str(e))

    def _load_failing(self, driver, module):
        self.config(driver=driver)
        missing = ModuleNotFoundError("No module named %r" % module,
                                      name=module)
        self.useFixture(fixtures.MockPatch(
            "stevedore.DriverManager", side_effect=missing))
        e = self.assertRaises(exceptions.DriverLoadFailed,
                              allocator.get_allocator, self.conf)
        self.assertIsInstance(e, exceptions.DriverNotFound)
        self.assertIs(missing, e.__cause__)
        return str(e)

    def test_missing_module_names_it_and_the_extras(self):
        self.assertEqual(
            "The allocator driver 'db' is installed but cannot be loaded: "
            "module sqlalchemy is missing (No module named 'sqlalchemy'); "
            "install it, or the extra of your backend: 'pip install "
            "murano-cidr[mysql]' or 'pip install murano-cidr[postgresql]'",
            self._load_failing("db", "sqlalchemy"))
        self.assertIn("'pip install murano-cidr[redis]' or 'pip install "
                      "murano-cidr[etcd]' or 'pip install "
                      "murano-cidr[zookeeper]'",
                      self._load_failing("lock", "tooz"))
        text = self._load_failing("random", "netaddr")
        self.assertIn("module netaddr is missing", text)
        self.assertIn("install it, or reinstall murano-cidr", text)
        self.assertNotIn("[", text)

    def test_missing_module_when_built_names_the_driver_extras(self):
        class NeedsAClient(random_driver.RandomDriver):
            extras = ("redis",)

            def __init__(self, conf):
                raise ModuleNotFoundError("No module named 'redis'",
                                          name="redis")

        self.useFixture(fixtures.MockPatch(
            "murano_cidr.engine.allocator.driver_class",
            return_value=NeedsAClient))
        e = self.assertRaises(exceptions.DriverLoadFailed,
                              allocator.get_allocator, self.conf)
        self.assertIn("module redis is missing", str(e))
        self.assertIn("'pip install murano-cidr[redis]'", str(e))

    def test_installed_drivers(self):
        names = installed.names()
        self.assertIn("random", names)
        self.assertIn("legacy", names)
        self.assertEqual(sorted(names), names)

    def test_bad_pool_fails_when_the_allocator_is_built(self):
        self.config(driver="random", pool_cidrs=["10.0.0.0/16"],
                    subnet_prefixlen=8)
        e = self.assertRaises(exceptions.InvalidConfig,
                              allocator.get_allocator, self.conf)
        self.assertIn("subnet_prefixlen", str(e))

    def test_bad_ipv6_pool_fails_when_the_allocator_is_built(self):
        self.config(driver="random", ipv6_pool_cidrs=["10.0.0.0/16"])
        e = self.assertRaises(exceptions.InvalidConfig,
                              allocator.get_allocator, self.conf)
        self.assertIn("ipv6_pool_cidrs", str(e))

    def test_explicit_pool_derives_prefix_from_max_hosts(self):
        self.config(driver="random", pool_cidrs=["172.16.0.0/20"],
                    max_hosts=60)
        driver = allocator.get_allocator(self.conf)
        self.assertEqual(26, driver.pool(4).prefixlen)
        self.assertEqual(64, driver.pool(4).size)

    def test_registers_options_on_a_fresh_conf(self):
        from oslo_config import cfg

        conf = cfg.ConfigOpts()
        conf([], project="murano-cidr-test", default_config_files=[])
        self.assertIsNotNone(allocator.get_allocator(conf))
