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

"""PostgreSQL and MariaDB servers of the test's own, in a network namespace.

Each fixture makes a :class:`murano_cidr.tests.functional.netns.ServerHost`,
creates a data directory in a temporary directory (owned by the server's
system user: initdb and mariadbd refuse to run as root), starts the server
inside the namespace, listening on the namespace's address only, and
creates an empty database with the db driver's tables. The machine's own
servers are never touched. Cleanup (also when the test fails) kills the
server and deletes the namespace and the directory.
"""

import glob
import os
import pwd
import shutil
import subprocess

import fixtures
import sqlalchemy as sa

from murano_cidr.operator.drivers.db import migration
from murano_cidr.tests.functional.lock import servers
from murano_cidr.tests.functional import netns

#: Seconds a server may take to accept connections.
START_TIMEOUT = 60

DATABASE = "murano"


def _postgres_bin():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return os.path.dirname(found[-1]) if found else None


class _Server(fixtures.Fixture):
    """A database server in a namespace of its own (a base class).

    :ivar host: the :class:`~murano_cidr.tests.functional.netns.ServerHost`.
    :ivar url: the SQLAlchemy URL of :data:`DATABASE` on it.
    """

    #: The system user the server runs as.
    user = None
    port = None
    name = None

    @classmethod
    def missing(cls):
        """Say what this machine lacks to run the server, or None."""
        try:
            pwd.getpwnam(cls.user)
        except KeyError:
            return "the %s system user" % cls.user
        return netns.missing()

    def _setUp(self):
        self.host = self.useFixture(netns.ServerHost())
        # NOTE: not the test's own temporary directory, which only root
        # may enter.
        self.directory = self.useFixture(fixtures.TempDir(
            rootdir=os.environ.get("TMPDIR", "/tmp"))).path
        uid, gid = pwd.getpwnam(self.user)[2:4]
        os.chown(self.directory, uid, gid)
        self.log = os.path.join(self.directory, "server.log")
        self.prepare()
        with open(self.log, "ab") as log:
            self.process = self.host.popen(
                self.command(), user=self.user, stdout=log,
                stderr=subprocess.STDOUT)
        if not servers.until(self._answers, START_TIMEOUT):
            raise RuntimeError("%s in %s did not start; see %s" % (
                self.name, self.host.name, self._tail()))
        self.create_database()
        self.url = self.url_of(self.host.address, self.port)
        engine = sa.create_engine(self.url)
        try:
            migration.upgrade_engine(engine)
        finally:
            engine.dispose()

    def _tail(self):
        with open(self.log, errors="replace") as f:
            return f.read()[-2000:]

    def _answers(self):
        if self.process.poll() is not None:
            raise RuntimeError("%s exited: %s" % (self.name, self._tail()))
        engine = sa.create_engine(self.admin_url(),
                                  connect_args=self.quick_connect)
        try:
            with engine.connect():
                return True
        except sa.exc.OperationalError:
            return False
        finally:
            engine.dispose()

    def url_of(self, address, port):
        """Return the URL of the test database at ``address:port``."""
        raise NotImplementedError

    def admin_url(self):
        raise NotImplementedError

    def prepare(self):
        raise NotImplementedError

    def command(self):
        raise NotImplementedError

    def create_database(self):
        engine = sa.create_engine(self.admin_url(),
                                  isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as conn:
                conn.execute(sa.text("CREATE DATABASE " + DATABASE))
        finally:
            engine.dispose()


class PostgresqlServer(_Server):
    """``postgres`` from ``/usr/lib/postgresql/*/bin``, trusting everyone."""

    user = "postgres"
    port = 5432
    name = "PostgreSQL"
    quick_connect = {"connect_timeout": 2}

    @classmethod
    def missing(cls):
        if _postgres_bin() is None:
            return "PostgreSQL's server (/usr/lib/postgresql/*/bin)"
        return super().missing()

    def prepare(self):
        self.data = os.path.join(self.directory, "data")
        self.host.run(os.path.join(_postgres_bin(), "initdb"), "-D",
                      self.data, "-A", "trust", "-U", "postgres",
                      "--no-sync", "-E", "UTF8", user=self.user)
        with open(os.path.join(self.data, "pg_hba.conf"), "a") as f:
            f.write("host all all 0.0.0.0/0 trust\n")

    def command(self):
        return [os.path.join(_postgres_bin(), "postgres"), "-D", self.data,
                "-h", self.host.address, "-p", str(self.port),
                "-k", self.directory, "-c", "fsync=off",
                "-c", "synchronous_commit=off",
                "-c", "full_page_writes=off"]

    def admin_url(self):
        return "postgresql+psycopg2://postgres@%s:%d/postgres" % (
            self.host.address, self.port)

    def url_of(self, address, port):
        return "postgresql+psycopg2://postgres@%s:%d/%s" % (
            address, port, DATABASE)


class MariadbServer(_Server):
    """``mariadbd`` with a fresh data directory, root without password."""

    user = "mysql"
    port = 3306
    name = "MariaDB"
    quick_connect = {"connect_timeout": 2, "read_timeout": 5}

    @classmethod
    def missing(cls):
        for tool in ("mariadbd", "mariadb-install-db"):
            if shutil.which(tool) is None:
                return "MariaDB's %s" % tool
        return super().missing()

    def prepare(self):
        self.data = os.path.join(self.directory, "data")
        subprocess.run(
            ["mariadb-install-db", "--no-defaults", "--user=" + self.user,
             "--datadir=" + self.data, "--skip-test-db",
             "--auth-root-authentication-method=normal",
             "--skip-name-resolve"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True,
            timeout=START_TIMEOUT)

    def command(self):
        return [shutil.which("mariadbd"), "--no-defaults",
                "--datadir=" + self.data,
                "--bind-address=" + self.host.address,
                "--port=%d" % self.port,
                "--socket=" + os.path.join(self.directory, "mysqld.sock"),
                "--pid-file=" + os.path.join(self.directory, "mysqld.pid"),
                "--skip-name-resolve", "--skip-log-bin",
                "--innodb-buffer-pool-size=32M",
                "--innodb-log-file-size=16M",
                "--innodb-flush-log-at-trx-commit=0",
                "--character-set-server=utf8mb4"]

    def admin_url(self):
        # The Unix socket: root may connect from localhost only, at first.
        return "mysql+pymysql://root@localhost/?unix_socket=%s" % (
            os.path.join(self.directory, "mysqld.sock"))

    def url_of(self, address, port):
        return "mysql+pymysql://root@%s:%d/%s?charset=utf8mb4" % (
            address, port, DATABASE)

    def create_database(self):
        super().create_database()
        # root may connect from the machine's end of the link too.
        engine = sa.create_engine(self.admin_url())
        try:
            with engine.begin() as conn:
                conn.execute(sa.text(
                    "GRANT ALL ON *.* TO 'root'@'%' IDENTIFIED BY ''"))
        finally:
            engine.dispose()
