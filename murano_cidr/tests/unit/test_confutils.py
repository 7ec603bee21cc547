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

"""Configuration objects built from Python values."""

import os

from murano_cidr.operator import confutils
from murano_cidr.tests import base


class TestConfUtils(base.TestCase):

    def test_make_conf(self):
        conf = confutils.make_conf(
            {"cidr_allocator": {"driver": "legacy",
                                "pool_cidrs": ["10.0.0.0/20", "10.1.0.0/20"],
                                "max_hosts": None}})
        self.assertEqual("legacy", conf.cidr_allocator.driver)
        self.assertEqual(["10.0.0.0/20", "10.1.0.0/20"],
                         conf.cidr_allocator.pool_cidrs)
        self.assertEqual(250, conf.cidr_allocator.max_hosts)
        self.assertEqual([], os.listdir(self.state_path))

    def test_configurations_do_not_share_values(self):
        one = confutils.make_conf({"cidr_allocator": {"max_hosts": 10}})
        two = confutils.make_conf({"cidr_allocator": {"driver": "random"}})
        self.assertEqual((10, "db"), (one.cidr_allocator.max_hosts,
                                      one.cidr_allocator.driver))
        self.assertEqual((250, "random"), (two.cidr_allocator.max_hosts,
                                           two.cidr_allocator.driver))

    def test_render_and_load(self):
        groups = {"cidr_allocator": {"driver": "db", "max_hosts": None},
                  "cidr_allocator_database": {"connection": "sqlite://"}}
        self.assertEqual("[cidr_allocator]\ndriver = db\n\n"
                         "[cidr_allocator_database]\n"
                         "connection = sqlite://\n", confutils.render(groups))
        path = os.path.join(self.state_path, "x.conf")
        confutils.write(path, groups)
        conf = confutils.load(path)
        self.assertEqual("db", conf.cidr_allocator.driver)
