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

"""A three-server ZooKeeper ensemble of the test's own, on the loopback."""

import os

import fixtures

from murano_cidr.tests.functional.lock import servers


class ZooKeeperMember(servers.ZooKeeperServer):
    """One server of :class:`ZooKeeperEnsemble`; the ensemble starts it.

    :param number: its id in the ensemble (``myid``), from 1.
    :param ports: its client port.
    :param quorum: the ensemble's ``server.N=`` lines.
    """

    def __init__(self, number, port, quorum):
        super().__init__()
        self.number = number
        self.name_in_logs = "server %d" % number
        self.fixed_port = port
        self.quorum = quorum

    def _setUp(self):
        self.port = self.fixed_port
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.prepare()
        self.addCleanup(self.stop)

    def prepare(self):
        super().prepare()
        config = os.path.join(self.directory, "conf", "zoo.cfg")
        with open(config) as f:
            text = f.read().replace("4lw.commands.whitelist=ruok",
                                    "4lw.commands.whitelist=ruok,srvr")
        with open(config, "w") as f:
            f.write(text + "initLimit=20\nsyncLimit=8\n" + self.quorum)
        with open(os.path.join(self.directory, "data", "myid"), "w") as f:
            f.write("%d\n" % self.number)

    def command(self):
        command = super().command()
        command[command.index(
            "org.apache.zookeeper.server.ZooKeeperServerMain")] = (
            "org.apache.zookeeper.server.quorum.QuorumPeerMain")
        return command

    def state(self):
        """Return ``(mode, connections)``, or None if it does not serve."""
        try:
            answer = servers._ask(self.address, self.port, b"srvr")
        except OSError:
            return None
        fields = dict(line.split(": ", 1) for line in
                      answer.decode("utf-8", "replace").splitlines()
                      if ": " in line)
        if fields.get("Mode") not in ("leader", "follower"):
            return None
        return fields["Mode"], int(fields.get("Connections", 0))

    def answers(self):
        return self.state() is not None


class ZooKeeperEnsemble(servers.Cluster):
    """Three ZooKeeper servers serving as one ensemble.

    :ivar members: the :class:`ZooKeeperMember` s.
    """

    server_class = servers.ZooKeeperServer
    ports_per_member = 3

    def make_members(self, ports):
        quorum = "".join(
            "server.%d=127.0.0.1:%d:%d\n"
            % (i + 1, ports[3 * i + 1], ports[3 * i + 2])
            for i in range(self.size))
        return [ZooKeeperMember(i + 1, ports[3 * i], quorum)
                for i in range(self.size)]

    @property
    def url(self):
        """The URL naming every server."""
        return "zookeeper://%s" % ",".join(
            "%s:%d" % (m.address, m.port) for m in self.members)

    def leader(self):
        """Return the member that leads, or None."""
        for member in self.members:
            if member.process is not None:
                state = member.state()
                if state and state[0] == "leader":
                    return member
        return None

    def busiest(self):
        """Return the live member holding most client connections."""
        live = [(m.state(), m) for m in self.members
                if m.process is not None]
        return max((state[1], member.number, member)
                   for state, member in live if state)[2]
