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

"""The adapter's one allocator per engine process."""

from oslo_config import cfg

from murano_cidr.engine.integration import murano
from murano_cidr.operator.drivers import commands
from murano_cidr.tests import base
from murano_cidr.tests.unit.integration import test_murano as fakes


class TestSharedAllocator(base.TestCase):

    def setUp(self):
        super().setUp()
        murano.reset_shared_allocator()
        self.addCleanup(murano.reset_shared_allocator)
        self.config(pool_cidrs=["10.20.0.0/23"], subnet_prefixlen=24,
                    driver="legacy")

    def test_built_once_per_process(self):
        first = murano.shared_allocator(self.conf)
        self.assertIs(first, murano.shared_allocator())
        self.assertEqual("legacy", first.driver.name)
        murano.reset_shared_allocator()
        self.config(driver="random")
        self.assertEqual("random",
                         murano.shared_allocator(self.conf).driver.name)

    def test_module_functions_use_it(self):
        murano.shared_allocator(self.conf)
        client = fakes.FakeNeutron(
            ports=[fakes.port(fakes.ROUTER, "a")],
            subnets=[fakes.subnet("a", "10.20.0.0/24")])
        self.assertEqual("10.20.1.0/24",
                         murano.get_available_cidr(client, fakes.ROUTER,
                                                   "net-1"))
        murano.confirm_cidr("net-1")
        self.assertFalse(murano.release_cidr("net-1"))

    def test_register_opts_lets_a_test_override_the_driver(self):
        conf = cfg.ConfigOpts()
        self.assertRaises(cfg.NoSuchGroupError, conf.set_override, "driver",
                          "legacy", group="cidr_allocator")
        commands.register_opts(conf)
        commands.register_opts(conf)
        conf.set_override("driver", "legacy", group="cidr_allocator")
        self.assertEqual("legacy",
                         murano.NetworkCidrAllocator(conf).driver.name)
