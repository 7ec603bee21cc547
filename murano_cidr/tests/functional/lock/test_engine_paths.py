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

"""A ``lock`` engine on a lock service carries its wing only, on every path.

:mod:`murano_cidr.tests.engine_paths` with ``coordination_url`` on a server
of the test's own (Redis, etcd, ZooKeeper), reached through the engine's
relay, which is cut for ``LockUnavailable``.
"""

import testscenarios

from murano_cidr.tests import base
from murano_cidr.tests import engine_paths
from murano_cidr.tests.functional.lock import servers

load_tests = testscenarios.load_tests_apply_scenarios

#: A lock service that is gone is given up on soon.
SHORT_WAIT = "[cidr_allocator]\nlock_timeout = 2\n"


class TestLockServicePaths(base.TestCase):

    scenarios = testscenarios.multiply_scenarios(
        [(s.name, {"server_class": s, "scheme": scheme}) for s, scheme in (
            (servers.RedisServer, "redis"), (servers.EtcdServer, "etcd3+http"),
            (servers.ZooKeeperServer, "zookeeper"))],
        [(path, {"path": path}) for path in
         ("happy",) + engine_paths.ERRORS["lock"]])

    def test_carries_its_wing_only(self):
        server = self.server_class()
        self.require_service(server.available, server.name)
        self.useFixture(server)
        report = engine_paths.engine_path(
            self, "lock", self.path,
            conf=SHORT_WAIT + "coordination_url = %s://127.0.0.1:{port}\n"
            % self.scheme, server=server.port)
        engine_paths.assertCarriesItsWingOnly(
            self, report, self.path, engine_paths.OVER_LIMIT["lock service"],
            engine_paths.OVER_TRANSITIONS["lock service"])
