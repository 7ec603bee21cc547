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

"""A forked engine worker never releases the reservations it inherited.

The parent holds a reservation on Redis (a tooz lock) and forks; the child
drops the allocator it inherited, as the integration guide says. The
parent's reservation must survive: another engine must not get its CIDR,
and the parent confirms it.
"""

import gc
import os
import uuid

from oslo_config import cfg

from murano_cidr.engine import allocator
from murano_cidr.engine.integration import murano
from murano_cidr import exceptions
from murano_cidr.operator.drivers import commands
from murano_cidr import opts
from murano_cidr.tests import base
from murano_cidr.tests.functional.lock import redis_server

#: One subnet: whoever holds its reservation holds the whole pool.
SETTINGS = {"driver": "lock", "pool_cidrs": ["10.77.0.0/24"],
            "subnet_prefixlen": 24,
            "coordination_url": "redis://%s:%d" % redis_server.MACHINE_REDIS}


class TestForkedChild(base.TestCase):

    def setUp(self):
        super().setUp()
        self.require_service(
            redis_server.answers(*redis_server.MACHINE_REDIS),
            "Redis on %s:%d" % redis_server.MACHINE_REDIS)
        self.config(**SETTINGS)
        self.scope = "router-%s" % uuid.uuid4().hex
        murano.reset_shared_allocator()
        self.addCleanup(murano.reset_shared_allocator)

    def other_engine(self):
        conf = cfg.ConfigOpts()
        commands.register_opts(conf)
        for name, value in SETTINGS.items():
            conf.set_override(name, value, group=opts.GROUP)
        driver = allocator.get_allocator(conf)
        self.addCleanup(driver.close)
        return driver

    def test_child_keeps_the_parent_s_reservation(self):
        shared = murano.shared_allocator(self.conf)
        cidr = shared.driver.allocate("net-1", scope=self.scope)
        pid = os.fork()
        if pid == 0:  # the child
            code = 1
            try:
                murano.reset_shared_allocator()
                gc.collect()
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(0, base.exit_code(status))
        other = self.other_engine()
        self.assertRaises(exceptions.PoolExhausted, other.allocate, "net-2",
                          scope=self.scope)
        shared.driver.confirm("net-1")
        self.assertEqual("10.77.0.0/24", cidr)
