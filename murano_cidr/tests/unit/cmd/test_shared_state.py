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

"""Commands that need allocations every process sees refuse other drivers."""

import os

import fixtures

from murano_cidr.engine.drivers import capabilities
from murano_cidr.engine.drivers.db import driver as db_driver
from murano_cidr.engine.drivers.lock import driver as lock_driver
from murano_cidr.engine.drivers import random as random_driver
from murano_cidr import exceptions
from murano_cidr.operator.cmd import cli
from murano_cidr.tests import base


class TestSharedState(base.TestCase):

    def _main(self, driver, *args):
        path = os.path.join(self.state_path, "murano-cidr.conf")
        with open(path, "w") as f:
            f.write("[cidr_allocator]\ndriver = %s\nstate_path = %s\n"
                    % (driver, self.state_path))
        err = self.useFixture(fixtures.StringStream("stderr"))
        self.useFixture(fixtures.MonkeyPatch("sys.stderr", err.stream))
        self.useFixture(fixtures.MonkeyPatch(
            "sys.stdout", self.useFixture(
                fixtures.StringStream("stdout")).stream))
        code = cli.main(["--config-file", path] + list(args))
        err.stream.seek(0)
        return code, err.stream.read()

    def test_capabilities(self):
        shares = capabilities.Capability.SHARES_STATE
        self.assertTrue(db_driver.DbDriver.has(shares))
        self.assertFalse(lock_driver.LockDriver.has(shares))
        self.assertFalse(random_driver.RandomDriver.has(shares))

    def test_lock_driver_commands_say_why(self):
        for args in (("list",), ("show", "net-1"), ("usage",),
                     ("allocate", "net-1", "--scope", "r"),
                     ("confirm", "net-1")):
            code, err = self._main("lock", *args)
            self.assertEqual(1, code, args)
            self.assertEqual(1, len(err.splitlines()), err)
            self.assertIn("reservations in flight", err)

    def test_stateless_driver_still_allocates(self):
        code, err = self._main("random", "allocate", "net-1")
        self.assertEqual((0, ""), (code, err))

    def test_require_shared_state(self):
        driver = lock_driver.LockDriver(self.conf)
        self.addCleanup(driver.close)
        e = self.assertRaises(exceptions.NotSupported, driver.require,
                              capabilities.Capability.SHARES_STATE, "list")
        self.assertIn("lock", str(e))
        self.assertIsNone(db_driver.DbDriver.require(
            capabilities.Capability.SHARES_STATE, "list"))
