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

"""Lock servers from pifpaf, what tooz's own CI runs its tests against.

A pifpaf driver starts a server on the machine's loopback and stops it at
the fixture's cleanup, nothing more. The tests that need more keep
:mod:`.servers`' own: pifpaf cannot kill a server and start it again on
the same port with the same data, run Redis with an append-only file (so
that its locks survive a restart), set ZooKeeper's tick (its default of
3 s makes sessions last at least 6 s), or start a server inside a network
namespace.

Debian's packages serve pifpaf's drivers as they are: ``redis-server``;
``etcd-server`` with ``etcd-client`` (pifpaf asks ``etcdctl`` whether the
member is healthy); ``zookeeper`` (pifpaf runs its ``zkServer.sh``).
"""

import fixtures

from murano_cidr.tests.functional.lock import servers


class PifpafServer(fixtures.Fixture):
    """A pifpaf driver on a free port (a base class).

    :ivar port: the client port on 127.0.0.1.
    :ivar url: the tooz coordination URL of the server.
    """

    #: What the server is, for messages.
    name = None
    #: The programs pifpaf runs.
    programs = ()

    def __init__(self):
        super().__init__()
        self.port = None

    @property
    def available(self):
        """Whether pifpaf and the server's programs are installed."""
        try:
            cls = self.driver_class()
        except ImportError:
            return False
        # The directories the driver itself adds to PATH, if any.
        extra = list(getattr(cls, "PATH", []))
        return all(cls.find_executable(program, extra)
                   for program in self.programs)

    def driver_class(self):
        """Return the pifpaf driver's class.

        :raises ImportError: if pifpaf is not installed.
        """
        raise NotImplementedError

    def driver(self):
        """Return the pifpaf driver fixture, on :attr:`port`."""
        return self.driver_class()(port=self.port)

    @property
    def url(self):
        raise NotImplementedError

    def _setUp(self):
        self.port, = servers.claim_ports(self)
        self.useFixture(self.driver())


class RedisServer(PifpafServer):
    """Redis, from pifpaf's ``redis`` driver."""

    name = "Redis"
    programs = ("redis-server",)

    def driver_class(self):
        from pifpaf.drivers import redis
        return redis.RedisDriver

    @property
    def url(self):
        return "redis://127.0.0.1:%d" % self.port


class EtcdServer(PifpafServer):
    """A one-member etcd cluster, from pifpaf's ``etcd`` driver."""

    name = "etcd"
    programs = ("etcd", "etcdctl")

    def driver_class(self):
        from pifpaf.drivers import etcd
        return etcd.EtcdDriver

    def driver(self):
        return self.driver_class()(port=self.port,
                                   peer_port=servers.claim_ports(self)[0])

    @property
    def url(self):
        return "etcd3+http://127.0.0.1:%d" % self.port


class ZooKeeperServer(PifpafServer):
    """A standalone ZooKeeper, from pifpaf's ``zookeeper`` driver."""

    name = "ZooKeeper"
    programs = ("java", "zkServer.sh")

    def driver_class(self):
        from pifpaf.drivers import zookeeper
        return zookeeper.ZooKeeperDriver

    @property
    def url(self):
        return "zookeeper://127.0.0.1:%d" % self.port
