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

"""Lock services the functional tests start themselves: Redis, etcd,
ZooKeeper.

Each server listens on a loopback port of its own (:func:`claim_ports`),
or on the address of a network namespace of the test's own
(:class:`murano_cidr.tests.functional.netns.ServerHost`) for the fault
tests, keeps its data in a temporary directory, and is stopped by the
fixture's cleanup.
:meth:`LocalServer.kill` sends SIGKILL, as a crash would;
:meth:`LocalServer.start` brings the server back on the same port with the
same data.
"""

import os
import random
import shutil
import signal
import socket
import subprocess

import fixtures
import tenacity

#: Seconds a server may take to answer after it was started (a JVM on a
#: loaded machine is slow).
START_TIMEOUT = 60

#: Where Debian's zookeeper package puts the server's jars.
ZOOKEEPER_JARS = ("/usr/share/java/zookeeper.jar",)


#: The lowest port :func:`claim_ports` hands out.
LOWEST_PORT = 10000


def _ephemeral_ports():
    """The ports the kernel gives the local end of outgoing connections."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low, high = (int(n) for n in f.read().split())
    except (OSError, ValueError):
        low, high = 32768, 60999
    return range(low, high + 1)


def claim_ports(fixture, count=1):
    """Return ``count`` TCP ports for servers that the tests start.

    Each is free on 127.0.0.1 now and stays the fixture's until its
    cleanup, so that a server the test stops can start again on its port:
    the ports lie outside the kernel's ephemeral range (which
    ``bind(("127.0.0.1", 0))`` would pick from, and which any client's
    connection may take while the server is down), and a claim in the
    abstract socket namespace keeps other test processes off them.

    :raises RuntimeError: if no ``count`` ports are free.
    """
    ephemeral = _ephemeral_ports()
    candidates = [port for port in range(LOWEST_PORT, 65536)
                  if port not in ephemeral]
    ports = []
    for port in random.sample(candidates, len(candidates)):
        claim = socket.socket(socket.AF_UNIX)
        try:
            claim.bind("\0murano-cidr-test-port-%d" % port)
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", port))
        except OSError:
            claim.close()
            continue
        fixture.addCleanup(claim.close)
        ports.append(port)
        if len(ports) == count:
            return ports
    raise RuntimeError("fewer than %d TCP ports free outside the "
                       "ephemeral range %d-%d"
                       % (count, ephemeral.start, ephemeral.stop - 1))


def until(condition, timeout):
    """Poll ``condition`` until it returns True or ``timeout`` passes.

    :returns: whether it returned True in time.
    """
    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_delay(timeout),
        wait=tenacity.wait_fixed(0.1),
        retry=(tenacity.retry_if_result(lambda ok: not ok)
               | tenacity.retry_if_exception_type(OSError)),
        reraise=True)
    try:
        return retrying(condition)
    except (tenacity.RetryError, OSError):
        return False


class LocalServer(fixtures.Fixture):
    """A server process of the test's own (a base class).

    Subclasses give :meth:`command` and :meth:`answers`.

    :param host: a :class:`~murano_cidr.tests.functional.netns.ServerHost`
        to run the server in, or None for the machine's loopback.
    :ivar address: the address the server listens on.
    :ivar port: its client port.
    :ivar directory: the server's temporary directory.
    :ivar url: the tooz coordination URL of the server.
    """

    #: What the server is, for messages.
    name = None

    def __init__(self, host=None):
        super().__init__()
        self.host = host
        self.address = "127.0.0.1" if host is None else host.address
        self.process = None
        self.port = None
        self.directory = None

    @property
    def available(self):
        """Whether the server's programs are installed."""
        raise NotImplementedError

    def command(self):
        """Return the server's command line."""
        raise NotImplementedError

    def answers(self):
        """Tell whether the server answers on its port."""
        raise NotImplementedError

    def prepare(self):
        """Write what the server needs in :attr:`directory`, once."""

    def _setUp(self):
        self.port, = claim_ports(self)
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.prepare()
        self.addCleanup(self.stop)
        self.start()

    def start(self):
        """Start the server and wait until it answers.

        :raises RuntimeError: if it does not answer within
            :data:`START_TIMEOUT` seconds.
        """
        self.launch()
        self.wait_until_it_answers()

    def launch(self):
        """Start the server's process, without waiting for it."""
        log = open(os.path.join(self.directory, "server.log"), "ab")
        popen = subprocess.Popen if self.host is None else self.host.popen
        try:
            self.process = popen(
                self.command(), stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, cwd=self.directory)
        finally:
            log.close()

    def wait_until_it_answers(self):
        """Wait until the launched server answers.

        :raises RuntimeError: if it does not answer within
            :data:`START_TIMEOUT` seconds.
        """
        if not until(lambda: self.process.poll() is None and self.answers(),
                     START_TIMEOUT):
            self.stop()
            raise RuntimeError("%s on port %d did not start; see %s"
                               % (self.name, self.port, self.log_tail()))

    def log_tail(self, lines=20):
        """Return the end of the server's log, for failure messages."""
        try:
            with open(os.path.join(self.directory, "server.log"),
                      errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError as e:
            return str(e)

    def kill(self):
        """SIGKILL the server, as a crash would, and reap it."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)
        self.process = None

    def stop(self):
        """Stop the server (SIGTERM, as an operator would) and wait."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
        self.process = None


class Cluster(fixtures.Fixture):
    """Servers of one cluster, started together (a base).

    A subclass gives :attr:`server_class`, :attr:`ports_per_member` and
    :meth:`make_members`.

    :ivar members: the members, each a :class:`LocalServer`.
    """

    size = 3
    server_class = None
    ports_per_member = 1

    def __init__(self):
        super().__init__()
        self.members = []

    @property
    def available(self):
        """Whether the server is installed."""
        return self.server_class().available

    def make_members(self, ports):
        """Return the member fixtures, unstarted, given their ports."""
        raise NotImplementedError

    def _setUp(self):
        ports = claim_ports(self, self.ports_per_member * self.size)
        self.members = [self.useFixture(member)
                        for member in self.make_members(ports)]
        # NOTE: no member answers before a quorum of them runs.
        for member in self.members:
            member.launch()
        for member in self.members:
            member.wait_until_it_answers()

    def log_tails(self):
        """Return the end of each member's log, for failure messages."""
        return "\n".join("%s: %s" % (m.name_in_logs, m.log_tail())
                         for m in self.members)


def _ask(address, port, command, timeout=2):
    """Send a four-letter command to a server and return its answer."""
    with socket.create_connection((address, port), timeout=timeout) as s:
        s.sendall(command)
        s.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            chunk = s.recv(4096)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


class ZooKeeperServer(LocalServer):
    """A standalone ZooKeeper server, from Debian's ``zookeeper`` jars.

    :param tick_ms: ZooKeeper's tick; sessions may last from 2 to 200
        ticks, so a short tick allows the short session timeouts tests use.
    """

    name = "ZooKeeper"

    def __init__(self, tick_ms=250, host=None):
        super().__init__(host)
        self.tick_ms = tick_ms
        self.java = shutil.which("java")

    @property
    def available(self):
        return self.java is not None and all(
            os.path.exists(jar) for jar in ZOOKEEPER_JARS)

    @property
    def url(self):
        return "zookeeper://%s:%d" % (self.address, self.port)

    def prepare(self):
        config = os.path.join(self.directory, "conf")
        os.mkdir(config)
        os.mkdir(os.path.join(self.directory, "data"))
        with open(os.path.join(config, "zoo.cfg"), "w") as f:
            f.write("tickTime=%d\n"
                    "minSessionTimeout=%d\n"
                    "maxSessionTimeout=%d\n"
                    "dataDir=%s\n"
                    "clientPort=%d\n"
                    "clientPortAddress=%s\n"
                    "admin.enableServer=false\n"
                    "4lw.commands.whitelist=ruok\n"
                    % (self.tick_ms, 2 * self.tick_ms, 200 * self.tick_ms,
                       os.path.join(self.directory, "data"), self.port,
                       self.address))
        with open(os.path.join(config, "log4j.properties"), "w") as f:
            f.write("log4j.rootLogger=WARN, CONSOLE\n"
                    "log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender\n"
                    "log4j.appender.CONSOLE.layout="
                    "org.apache.log4j.PatternLayout\n")

    def command(self):
        config = os.path.join(self.directory, "conf")
        # NOTE: a small heap and the client JIT only: the server holds a few
        # hundred znodes, and start-up time is what a test waits for.
        return [self.java, "-Xmx128m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Dzookeeper.admin.enableServer=false",
                "-cp", ":".join((config,) + ZOOKEEPER_JARS),
                "org.apache.zookeeper.server.ZooKeeperServerMain",
                os.path.join(config, "zoo.cfg")]

    def answers(self):
        try:
            return _ask(self.address, self.port, b"ruok") == b"imok"
        except OSError:
            return False


class EtcdServer(LocalServer):
    """A one-member etcd cluster, from Debian's ``etcd-server``."""

    name = "etcd"

    def __init__(self, host=None):
        super().__init__(host)
        self.etcd = shutil.which("etcd")
        self.peer_port = None

    @property
    def available(self):
        return self.etcd is not None

    @property
    def url(self):
        return "etcd3+http://%s:%d" % (self.address, self.port)

    def prepare(self):
        self.peer_port, = claim_ports(self)

    def command(self):
        client = "http://%s:%d" % (self.address, self.port)
        peer = "http://%s:%d" % (self.address, self.peer_port)
        return [self.etcd, "--name", "murano-cidr-test",
                "--data-dir", os.path.join(self.directory, "data"),
                "--listen-client-urls", client,
                "--advertise-client-urls", client,
                "--listen-peer-urls", peer,
                "--initial-advertise-peer-urls", peer,
                "--initial-cluster", "murano-cidr-test=%s" % peer,
                "--initial-cluster-state", "new",
                "--log-level", "warn"]

    def answers(self):
        try:
            with socket.create_connection((self.address, self.port),
                                          timeout=2) as s:
                s.sendall(b"GET /health HTTP/1.0\r\n\r\n")
                reply = s.recv(4096)
        except OSError:
            return False
        return b'"health":"true"' in reply


class RedisServer(LocalServer):
    """A ``redis-server`` of the test's own.

    It keeps its data in an append-only file, fsynced at every write, so a
    stop and start lose no lock (as a production Redis used for locks
    should be run).
    """

    name = "Redis"

    def __init__(self, host=None):
        super().__init__(host)
        self.binary = shutil.which("redis-server")

    @property
    def available(self):
        return self.binary is not None

    @property
    def url(self):
        return "redis://%s:%d" % (self.address, self.port)

    def command(self):
        return [self.binary, "--port", str(self.port),
                "--bind", self.address, "--dir", self.directory,
                "--save", "", "--appendonly", "yes",
                "--appendfsync", "always", "--protected-mode", "no"]

    def answers(self):
        try:
            return _ask(self.address, self.port, b"PING\r\n") == b"+PONG\r\n"
        except OSError:
            return False
