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

"""A three-member etcd cluster of the test's own, on the loopback."""

import etcd3gw
import fixtures

from murano_cidr.tests.functional.lock import servers


class EtcdMember(servers.EtcdServer):
    """One member of :class:`EtcdCluster`; the cluster starts it.

    :param name: the member's name.
    :param ports: its client and peer ports.
    :param cluster: etcd's ``--initial-cluster``.
    """

    def __init__(self, name, ports, cluster):
        super().__init__()
        self.member_name = self.name_in_logs = name
        self.ports = ports
        self.cluster = cluster

    def _setUp(self):
        self.port, self.peer_port = self.ports
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.addCleanup(self.stop)

    def command(self):
        command = super().command()
        command[command.index("--name") + 1] = self.member_name
        command[command.index("--initial-cluster") + 1] = self.cluster
        return command

    def status(self):
        """Return etcd's status of this member (its id, the leader's)."""
        return etcd3gw.client(host=self.address, port=self.port,
                              timeout=5).status()


class EtcdCluster(servers.Cluster):
    """Three etcd members; each answers once the cluster has a leader.

    :ivar members: the :class:`EtcdMember` s.
    """

    server_class = servers.EtcdServer
    ports_per_member = 2

    def make_members(self, ports):
        names = ["m%d" % i for i in range(self.size)]
        cluster = ",".join("%s=http://127.0.0.1:%d" % (name, ports[2 * i + 1])
                           for i, name in enumerate(names))
        return [EtcdMember(name, ports[2 * i:2 * i + 2], cluster)
                for i, name in enumerate(names)]

    def leader(self):
        """Return the member that leads now, as a live member sees it."""
        for member in self.members:
            if member.process is None:
                continue
            status = member.status()
            leader = status["leader"]
            for other in self.members:
                if (other.process is not None
                        and other.status()["header"]["member_id"] == leader):
                    return other
        return None

    def url(self, first=None):
        """Return the URL naming every member, ``first`` first."""
        members = sorted(self.members, key=lambda m: m is not first)
        return "etcd3+http://%s" % ",".join(
            "%s:%d" % (m.address, m.port) for m in members)
