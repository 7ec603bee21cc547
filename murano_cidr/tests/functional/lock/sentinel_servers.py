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

"""Redis with Sentinel, started by the tests: a master, a replica and three
Sentinels (quorum 2) on loopback ports of the test's own.

The Sentinels judge a server down after :data:`DOWN_AFTER_MS` without an
answer, so a master stopped (SIGSTOP: a VM pause, a swap storm) is
replaced by its replica within a few seconds; a stopped master, once
resumed, is turned into a replica of the new one by the Sentinels.
Everything is stopped by the fixture's cleanup.
"""

import os
import shutil
import signal

import fixtures
import redis

from murano_cidr.tests.functional.lock import servers

#: The name the Sentinels monitor the master under.
MASTER_NAME = "murano-cidr-test"
#: Milliseconds without an answer before a Sentinel judges a server down.
DOWN_AFTER_MS = 2000
#: Sentinel's failover timeout, in milliseconds.
FAILOVER_TIMEOUT_MS = 6000
#: Seconds to wait for the Sentinels to see a change, at most.
CHANGE_TIMEOUT = 60


def _client(address, port):
    return redis.Redis(host=address, port=port, socket_timeout=2,
                       socket_connect_timeout=2, decode_responses=True)


def ask(address, port, *command):
    """Send one command to a Redis or a Sentinel; None if no answer."""
    client = _client(address, port)
    try:
        return client.execute_command(*command)
    except redis.RedisError:
        return None
    finally:
        client.close()


class RedisNode(servers.RedisServer):
    """A Redis server, optionally the replica of another.

    :param replica_of: ``(address, port)`` of its master, or None.
    """

    def __init__(self, replica_of=None):
        super().__init__()
        self.replica_of = replica_of

    def command(self):
        command = super().command()
        if self.replica_of is not None:
            command += ["--replicaof", self.replica_of[0],
                        str(self.replica_of[1])]
        return command

    def role(self):
        """Return its role: ``"master"``, ``"slave"``, or None (no answer)."""
        answer = ask(self.address, self.port, "ROLE")
        return answer[0] if answer else None

    def connected_replicas(self):
        """Return how many replicas it has, or None if it does not answer."""
        info = _client(self.address, self.port)
        try:
            return info.info("replication").get("connected_slaves", 0)
        except redis.RedisError:
            return None
        finally:
            info.close()

    def freeze(self):
        """SIGSTOP the server: it answers nothing, its kernel still accepts."""
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self):
        """SIGCONT the server."""
        self.process.send_signal(signal.SIGCONT)

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
        super().stop()


class SentinelServer(servers.LocalServer):
    """A Redis Sentinel monitoring one master.

    :param master: the :class:`RedisNode` it monitors first.
    """

    name = "Redis Sentinel"

    def __init__(self, master):
        super().__init__()
        self.master = master
        self.binary = shutil.which("redis-server")

    @property
    def available(self):
        return self.binary is not None

    @property
    def config(self):
        return os.path.join(self.directory, "sentinel.conf")

    def prepare(self):
        # NOTE: Sentinel rewrites its configuration file: it must be
        # writable, and it is the Sentinel's state across restarts.
        with open(self.config, "w") as f:
            f.write("port %d\n"
                    "bind %s\n"
                    "dir %s\n"
                    "protected-mode no\n"
                    "sentinel monitor %s %s %d 2\n"
                    "sentinel down-after-milliseconds %s %d\n"
                    "sentinel failover-timeout %s %d\n"
                    "sentinel parallel-syncs %s 1\n"
                    % (self.port, self.address, self.directory,
                       MASTER_NAME, self.master.address, self.master.port,
                       MASTER_NAME, DOWN_AFTER_MS,
                       MASTER_NAME, FAILOVER_TIMEOUT_MS, MASTER_NAME))

    def command(self):
        return [self.binary, self.config, "--sentinel"]

    def answers(self):
        return ask(self.address, self.port, "PING") is True

    def master_address(self):
        """Return the ``(address, port)`` it names master, or None."""
        answer = ask(self.address, self.port, "SENTINEL",
                     "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)
        return (answer[0], int(answer[1])) if answer else None

    def knows_everyone(self):
        """Tell whether it sees the replica and the other two Sentinels."""
        answer = ask(self.address, self.port, "SENTINEL", "MASTER",
                     MASTER_NAME)
        if not answer:
            return False
        # redis-py parses the answer into a dictionary.
        state = (answer if isinstance(answer, dict)
                 else dict(zip(answer[::2], answer[1::2])))
        return (int(state.get("num-slaves", 0)) >= 1
                and int(state.get("num-other-sentinels", 0)) >= 2)


class SentinelCluster(fixtures.Fixture):
    """A master, one replica and three Sentinels, ready to fail over.

    :ivar master: the first master (:class:`RedisNode`).
    :ivar replica: its replica.
    :ivar sentinels: the three :class:`SentinelServer`.
    """

    def __init__(self):
        super().__init__()
        self.master = RedisNode()
        self.replica = None
        self.sentinels = []

    @property
    def available(self):
        return self.master.available

    @property
    def nodes(self):
        return [self.master, self.replica]

    def url(self, sentinels=None):
        """Return the coordination URL naming ``sentinels`` (or all)."""
        first, *others = sentinels or self.sentinels
        return "redis://%s:%d?sentinel=%s%s" % (
            first.address, first.port, MASTER_NAME,
            "".join("&sentinel_fallback=%s:%d" % (s.address, s.port)
                    for s in others))

    def _setUp(self):
        self.useFixture(self.master)
        self.replica = self.useFixture(RedisNode(
            replica_of=(self.master.address, self.master.port)))
        if not servers.until(lambda: self.master.connected_replicas() == 1,
                             CHANGE_TIMEOUT):
            raise RuntimeError("the replica did not connect to its master")
        self.sentinels = [self.useFixture(SentinelServer(self.master))
                          for _ in range(3)]
        if not servers.until(
                lambda: all(s.knows_everyone() for s in self.sentinels),
                CHANGE_TIMEOUT):
            raise RuntimeError("the Sentinels did not discover each other")

    def current_master(self):
        """Return the node a majority of the Sentinels names, or None."""
        named = [s.master_address() for s in self.sentinels
                 if s.process is not None]
        for node in self.nodes:
            if named.count((node.address, node.port)) >= 2:
                return node
        return None

    def wait_for_master(self, node, timeout=CHANGE_TIMEOUT):
        """Wait until a majority of the Sentinels names ``node`` master.

        :returns: whether they did within ``timeout`` seconds.
        """
        return servers.until(lambda: self.current_master() is node, timeout)

    def wait_for_role(self, node, role, timeout=CHANGE_TIMEOUT):
        """Wait until ``node`` itself reports ``role``.

        :returns: whether it did within ``timeout`` seconds.
        """
        return servers.until(lambda: node.role() == role, timeout)
