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

"""The simulation runner's checks and configuration (no processes here)."""

import os

from murano_cidr import exceptions
from murano_cidr import opts
from murano_cidr.simulate import runner
from murano_cidr.tests import base


class TestSpecValidation(base.TestCase):

    def _validate(self, **kwargs):
        spec = dict(drivers=["legacy"], ks=[2], trials=10,
                    pool={"max_environments": 20})
        spec.update(kwargs)
        return runner.Runner(runner.Spec(**spec)).validate()

    def test_returns_pool_size(self):
        self.assertEqual(32, self._validate())
        self.assertEqual(256, self._validate(pool={}))
        self.assertEqual(64, self._validate(
            pool={"pool_cidrs": ["192.168.0.0/18"], "subnet_prefixlen": 24}))

    def test_unknown_driver(self):
        e = self.assertRaises(exceptions.DriverNotFound, self._validate,
                              drivers=["legacy", "nope"])
        self.assertIn("legacy", str(e))

    def test_bad_numbers(self):
        self.assertRaises(exceptions.InvalidArgument, self._validate,
                          drivers=[])
        self.assertRaises(exceptions.InvalidArgument, self._validate,
                          ks=[0, 2])
        self.assertRaises(exceptions.InvalidArgument, self._validate, ks=[])
        self.assertRaises(exceptions.InvalidArgument, self._validate,
                          trials=0)

    def test_existing_must_leave_room(self):
        self.assertEqual(32, self._validate(existing=31))
        e = self.assertRaises(exceptions.InvalidArgument, self._validate,
                              existing=32)
        self.assertIn("32 subnets", str(e))

    def test_bad_pool(self):
        e = self.assertRaises(exceptions.InvalidConfig, self._validate,
                              pool={"max_environments": 0})
        self.assertIn("max_environments", str(e))


class TestConfigFile(base.TestCase):

    def test_round_trip(self):
        path = os.path.join(self.state_path, "db.conf")
        spec = runner.Spec(
            drivers=["db"], ks=[2], trials=1,
            pool={"pool_cidrs": ["10.0.0.0/20", "10.1.0.0/20"],
                  "subnet_prefixlen": 24, "max_hosts": None},
            config={"cidr_allocator_database": {"connection": "sqlite://"},
                    opts.GROUP: {"coordination_url": "redis://h:1"}})
        runner.write_config(path, "db", spec, "/tmp/state")
        conf = runner.load_config(path)
        group = conf[opts.GROUP]
        self.assertEqual("db", group.driver)
        self.assertEqual(["10.0.0.0/20", "10.1.0.0/20"], group.pool_cidrs)
        self.assertEqual(24, group.subnet_prefixlen)
        self.assertEqual(250, group.max_hosts)
        with open(path) as f:
            text = f.read()
        self.assertIn("[cidr_allocator_database]\nconnection = sqlite://",
                      text)
        self.assertIn("coordination_url = redis://h:1", text)
        self.assertIn("state_path = /tmp/state", text)


class TestResult(base.TestCase):

    def test_figures(self):
        r = runner.Result("legacy", 10, 200, 32, 16, collided=190)
        self.assertEqual(16, r.free)
        self.assertAlmostEqual(0.95, r.probability)
        low, high = r.interval
        self.assertLess(low, 0.95)
        self.assertGreater(high, 0.95)
        # 1 - 16! / (6! * 16**10)
        self.assertAlmostEqual(0.973571, r.birthday, places=6)
        self.assertEqual(0.0, runner.Result("db", 2, 0, 32, 0).probability)
