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

"""A 3-node Galera cluster of MariaDB servers, started by the tests.

:class:`GaleraCluster` runs three ``mariadbd`` with Debian's galera-4
provider on loopback ports of their own, with their data directories in
a temporary directory, as the ``mysql`` user when the tests run as root (a
state snapshot transfer by rsync cannot work in a root-owned data
directory). Node 1 bootstraps the cluster (``--wsrep-new-cluster``); nodes
2 and 3 join it with an empty data directory and receive their state by
rsync. A node that was killed restarts as the distribution's service
starts it: ``galera_recovery`` first reads the position its InnoDB files
reached, so that it asks the others for the writes it missed (IST) rather
than for a full copy (an rsync SST, which blocks writes on the donor for
the whole transfer). Everything stops (SIGKILL to each node's process
group, so the SST helpers go too) and is removed when the fixture is
cleaned up.

The tests get a database and a user of their own on it (:meth:`database`)
and one URL per node (:meth:`url`); :meth:`kill` and :meth:`start` take a
node down and bring it back.
"""

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import uuid

import fixtures
import pymysql
import tenacity

from murano_cidr.tests.functional.lock import servers

#: Where Debian's galera-4 package puts the provider.
PROVIDERS = ("/usr/lib/galera/libgalera_smm.so", "/usr/lib/libgalera_smm.so",
             "/usr/lib64/galera-4/libgalera_smm.so")

#: How long a node may take to start, join or rejoin, in seconds.
START_TIMEOUT = 120

#: The Galera nodes' settings beyond ports and paths: small, and quick to
#: notice a dead node (a killed node is declared gone after ~5 s).
PROVIDER_OPTIONS = ("gcache.size=64M; evs.suspect_timeout=PT3S; "
                    "evs.inactive_timeout=PT5S; evs.install_timeout=PT5S; "
                    "evs.keepalive_period=PT1S; pc.wait_prim_timeout=PT30S")

_CONFIG = """\
[mariadbd]
datadir = {datadir}
socket = {socket}
pid-file = {directory}/mariadbd.pid
log-error = {directory}/error.log
port = {port}
bind-address = 127.0.0.1
skip-name-resolve
skip-log-bin
innodb_buffer_pool_size = 32M
innodb_log_file_size = 16M
innodb_flush_log_at_trx_commit = 2
innodb_autoinc_lock_mode = 2
binlog_format = ROW
default_storage_engine = InnoDB
performance_schema = OFF
max_connections = 200
wsrep_on = ON
wsrep_provider = {provider}
wsrep_cluster_name = {cluster}
wsrep_cluster_address = gcomm://{peers}
wsrep_node_name = node{number}
wsrep_node_address = 127.0.0.1:{gcomm_port}
wsrep_sst_receive_address = 127.0.0.1:{sst_port}
wsrep_sst_method = rsync
wsrep_provider_options = "gmcast.listen_addr=tcp://127.0.0.1:{gcomm_port}; \
ist.recv_addr=127.0.0.1:{ist_port}; {options}"
"""


#: Runs a node ("$@") and kills its whole session once standard input
#: reaches its end (the test process closed it, or died).
_WATCHDOG = ('exec 3<&0; "$@" <&- 3<&- & node=$!; '
             '(read _ <&3; kill -KILL 0) & wait "$node"')


def provider():
    """Return the path of the Galera provider library, or None."""
    for path in PROVIDERS:
        if os.path.exists(path):
            return path
    return None


def missing():
    """Say what this machine lacks to run a Galera cluster, or None."""
    for binary in ("mariadbd", "mariadb-install-db", "galera_recovery",
                   "rsync"):
        if shutil.which(binary) is None and not os.path.exists(
                os.path.join("/usr/sbin", binary)):
            return "%s (install mariadb-server and rsync)" % binary
    if provider() is None:
        return "the Galera provider libgalera_smm.so (install galera-4)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("mysql")
        except KeyError:
            return "a mysql user to run the nodes as"
    return None


def _binary(name):
    return shutil.which(name) or os.path.join("/usr/sbin", name)


def _until(condition, timeout, what):
    """Poll ``condition`` until it holds; raise after ``timeout`` seconds."""
    try:
        tenacity.Retrying(
            stop=tenacity.stop_after_delay(timeout),
            wait=tenacity.wait_fixed(0.2),
            retry=(tenacity.retry_if_result(lambda ok: not ok)
                   | tenacity.retry_if_exception_type(pymysql.Error)),
            reraise=True)(condition)
    except (tenacity.RetryError, pymysql.Error) as e:
        raise RuntimeError("Galera test cluster: %s within %d s (%s)"
                           % (what, timeout, e))


class Node(object):
    """One ``mariadbd`` of the cluster."""

    def __init__(self, number, directory, ports):
        self.number = number
        self.directory = directory
        self.datadir = os.path.join(directory, "data")
        self.socket = os.path.join(directory, "mariadbd.sock")
        self.config = os.path.join(directory, "my.cnf")
        self.port, self.gcomm_port, self.ist_port, self.sst_port = ports
        self.process = None

    @property
    def running(self):
        return self.process is not None and self.process.poll() is None

    def admin(self):
        """Connect as the server's root, through its socket."""
        return pymysql.connect(unix_socket=self.socket, user="root",
                               connect_timeout=5, read_timeout=10,
                               autocommit=True)

    def status(self, name):
        """Read a global status variable (e.g. ``wsrep_cluster_size``)."""
        with self.admin() as connection:
            with connection.cursor() as cursor:
                cursor.execute("SHOW GLOBAL STATUS LIKE %s", (name,))
                row = cursor.fetchone()
        return row[1] if row else None

    def synced(self, size):
        """Tell whether the node is in a primary component of ``size``."""
        return (self.status("wsrep_local_state_comment") == "Synced"
                and self.status("wsrep_cluster_size") == str(size)
                and self.status("wsrep_ready") == "ON")

    def state(self):
        """Say what the node is doing, for failure details.

        Its replication state, its open transactions and its log's end.
        """
        lines = ["node %d:" % self.number]
        try:
            with self.admin() as connection:
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SHOW GLOBAL STATUS WHERE Variable_name IN "
                        "('wsrep_local_state_comment', 'wsrep_cluster_size',"
                        " 'wsrep_local_recv_queue', "
                        "'wsrep_flow_control_paused')")
                    lines.append(repr(dict(cursor.fetchall())))
                    cursor.execute(
                        "SELECT trx_id, trx_state, trx_started, "
                        "trx_wait_started, trx_query "
                        "FROM information_schema.innodb_trx")
                    lines += [repr(row) for row in cursor.fetchall()]
        except pymysql.Error as e:
            lines.append("not answering: %s" % e)
        return "\n".join(lines + [self.log()])

    def log(self):
        """The tail of the node's error log, for failure messages."""
        try:
            with open(os.path.join(self.directory, "error.log"),
                      errors="replace") as f:
                return "".join(f.readlines()[-30:])
        except OSError:
            return ""


class GaleraCluster(fixtures.Fixture):
    """Three MariaDB nodes in one Galera cluster, on loopback ports.

    Check :func:`missing` first; the fixture raises RuntimeError (with the
    end of a node's log) if a node does not start or join.

    :param size: the number of nodes.
    """

    def __init__(self, size=3):
        super().__init__()
        self.size = size
        self.nodes = []
        self.user = None

    def _setUp(self):
        if os.geteuid() == 0:
            self.user = pwd.getpwnam("mysql")
        # NOTE: not fixtures.TempDir: the nodes run as mysql and must reach
        # their directories, so the tree is theirs.
        self.directory = tempfile.mkdtemp(prefix="murano-cidr-galera-")
        self.addCleanup(shutil.rmtree, self.directory, True)
        os.chmod(self.directory, 0o755)
        ports = servers.claim_ports(self, 4 * self.size)
        cluster = "murano-cidr-" + uuid.uuid4().hex[:8]
        for number in range(1, self.size + 1):
            directory = os.path.join(self.directory, "node%d" % number)
            os.mkdir(directory)
            node = Node(number, directory, ports[4 * (number - 1):
                                                 4 * number])
            self.nodes.append(node)
        peers = ",".join("127.0.0.1:%d" % n.gcomm_port for n in self.nodes)
        for node in self.nodes:
            os.mkdir(node.datadir)
            with open(node.config, "w") as f:
                f.write(_CONFIG.format(
                    datadir=node.datadir, socket=node.socket,
                    directory=node.directory, port=node.port,
                    provider=provider(), cluster=cluster, peers=peers,
                    number=node.number, gcomm_port=node.gcomm_port,
                    sst_port=node.sst_port, ist_port=node.ist_port,
                    options=PROVIDER_OPTIONS))
            self._own(node.directory)
        self.addCleanup(self.stop)
        self._install(self.nodes[0])
        self.start(1, bootstrap=True)
        for node in self.nodes[1:]:
            self.start(node.number)

    def _own(self, path):
        if self.user is None:
            return
        for root, dirs, files in os.walk(path):
            for name in [root] + [os.path.join(root, n) for n in dirs + files]:
                os.chown(name, self.user.pw_uid, self.user.pw_gid)

    def _install(self, node):
        """Create the system tables of the node that bootstraps."""
        command = [_binary("mariadb-install-db"),
                   "--defaults-file=" + node.config,
                   "--auth-root-authentication-method=normal",
                   "--skip-test-db", "--skip-name-resolve"]
        if self.user is not None:
            command.append("--user=mysql")
        result = subprocess.run(command, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, timeout=120)
        if result.returncode:
            raise RuntimeError("mariadb-install-db failed: %s"
                               % result.stdout.decode(errors="replace"))

    def node(self, number):
        """Return node ``number`` (1-based)."""
        return self.nodes[number - 1]

    def start(self, number, bootstrap=False):
        """Start node ``number`` and wait until the cluster has every node.

        :param bootstrap: start a new cluster (node 1, at first).
        :raises RuntimeError: if it does not join in time.
        """
        node = self.node(number)
        command = [_binary("mariadbd"), "--defaults-file=" + node.config]
        if self.user is not None:
            command.append("--user=mysql")
        if bootstrap:
            command.append("--wsrep-new-cluster")
        elif os.path.exists(os.path.join(node.datadir, "grastate.dat")):
            command += self._recovered_position(node)
        # NOTE: in a session of its own, under a shell that kills the
        # session when its standard input closes: should the test process
        # die without cleaning up, the node (and its SST helpers) goes too.
        node.process = subprocess.Popen(
            ["sh", "-c", _WATCHDOG, "sh"] + command, stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        expected = number if bootstrap else len(
            [n for n in self.nodes if n.running])

        def joined():
            if not node.running:
                raise RuntimeError("node %d exited with %s" % (
                    number, node.process.returncode))
            # NOTE: every node, the donor too: it takes writes as the
            # others do only once it is back in Synced.
            return all(n.synced(expected) for n in self.nodes if n.running)

        try:
            _until(joined, START_TIMEOUT, "node %d did not join a cluster "
                   "of %d" % (number, expected))
        except RuntimeError as e:
            raise RuntimeError("%s\n%s" % (e, node.log()))

    @staticmethod
    def _recovered_position(node):
        """Run ``galera_recovery`` on a node's data, as systemd does.

        :returns: the ``--wsrep-start-position`` option to start the node
            with, in a list (empty if the node had no position to recover).
        :raises RuntimeError: if the recovery fails.
        """
        result = subprocess.run(
            [_binary("galera_recovery"), "--defaults-file=" + node.config],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            timeout=START_TIMEOUT)
        if result.returncode:
            raise RuntimeError("galera_recovery failed on node %d: %s" % (
                node.number, result.stderr.decode(errors="replace")))
        return result.stdout.decode().split()

    def kill(self, number):
        """SIGKILL node ``number`` (and its helpers).

        Waits until the other nodes have noticed it is gone.
        """
        node = self.node(number)
        self._kill(node)
        alive = [n for n in self.nodes if n.running]
        for other in alive:
            _until(lambda: other.synced(len(alive)), START_TIMEOUT,
                   "node %d did not notice node %d was gone"
                   % (other.number, number))

    @staticmethod
    def _kill(node):
        if node.process is None:
            return
        try:
            os.killpg(node.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        node.process.wait(timeout=60)
        node.process.stdin.close()
        node.process = None

    def stop(self):
        """Kill every node; their data goes with the temporary directory."""
        for node in self.nodes:
            self._kill(node)

    def database(self):
        """Create a database and a user of its own on the cluster.

        :returns: ``(name, user, password)``.
        """
        name = "murano_cidr_" + uuid.uuid4().hex[:12]
        password = uuid.uuid4().hex
        running = [n for n in self.nodes if n.running]
        with running[0].admin() as connection:
            with connection.cursor() as cursor:
                cursor.execute("CREATE DATABASE %s CHARACTER SET utf8mb4"
                               % name)
                cursor.execute("CREATE USER '%s'@'127.0.0.1' IDENTIFIED BY "
                               "'%s'" % (name[:32], password))
                cursor.execute("GRANT ALL PRIVILEGES ON %s.* TO "
                               "'%s'@'127.0.0.1'" % (name, name[:32]))
        return name, name[:32], password

    def url(self, number, database):
        """Return the SQLAlchemy URL of ``database`` on node ``number``.

        :param database: what :meth:`database` returned.
        """
        name, user, password = database
        return "mysql+pymysql://%s:%s@127.0.0.1:%d/%s" % (
            user, password, self.node(number).port, name)
