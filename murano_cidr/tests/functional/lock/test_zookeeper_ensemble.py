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

"""The ``lock`` driver on a three-server ZooKeeper ensemble of the test's
own (:mod:`.zookeeper_ensemble`), the URL naming every server.

Engine processes allocate in one scope while the leader is SIGKILLed,
then (once it is back) the server holding most client sessions: kazoo
moves the sessions to another server. No two engines may hold one CIDR
(the history checker), every call ends typed within the watchdog, and
no reservation is lost. One ensemble, one test: three JVMs are heavy on
CI's two cores. Its engines run plain and patched by eventlet as
Murano's engine is (:mod:`~murano_cidr.tests.functional.runtimes`), both
in CI.
"""

import time

import fixtures

from murano_cidr.tests import base
from murano_cidr.tests.functional.lock import test_etcd_cluster
from murano_cidr.tests.functional.lock import zookeeper_ensemble
from murano_cidr.tests.functional import runtimes

load_tests = runtimes.load_tests


class ZooKeeperEnsembleTests(test_etcd_cluster.ClusterEngines,
                             base.TestCase):
    """Three ZooKeeper servers; engines in processes of their own."""

    patched_in_ci = frozenset(("test_leader_then_busiest_server_killed",))

    #: The session timeout too: kazoo moves a session within it.
    lock_timeout = 6

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.Timeout(test_etcd_cluster.TEST_TIMEOUT,
                                         gentle=True))
        ensemble = zookeeper_ensemble.ZooKeeperEnsemble()
        self.require_service(ensemble.available, "the ZooKeeper server")
        self.cluster = self.useFixture(ensemble)

    def test_leader_then_busiest_server_killed(self):
        run = self.start_engines_on(self.cluster.url)
        self.progress(self.before)
        fault_start = time.monotonic_ns()
        leader = self.cluster.leader()
        self.assertIsNotNone(leader, self.cluster.log_tails())
        leader.kill()
        self.progress(self.before)
        leader.start()
        busiest = self.cluster.busiest()
        busiest.kill()
        fault_end = time.monotonic_ns()
        self.progress(self.after)
        figures = self.finish(run, fault_start, fault_end)
        self.assertEqual(0, figures["lost"], figures)
