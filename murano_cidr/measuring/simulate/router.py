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

"""A model of a Neutron router that several processes plug subnets into.

Neutron refuses to add a router interface on a subnet whose CIDR overlaps one
already on the router; for Murano that is the moment a colliding deployment
fails. The model keeps the router's subnets in a SQLite file so that engines
running as separate processes share it, and checks and records each new
subnet in one ``BEGIN IMMEDIATE`` transaction, so the check is atomic the
way Neutron's is. Writers queue on an inter-process file lock first, which
wakes the next one at once, where SQLite's own busy handler would sleep.
"""

import contextlib
import os
import sqlite3

from oslo_concurrency import lockutils
from oslo_log import log as logging

from murano_cidr.engine import taken as taken_mod
from murano_cidr import exceptions

LOG = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS router_subnets (
    router_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    cidr TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS router_subnets_router
    ON router_subnets (router_id);
CREATE TABLE IF NOT EXISTS router_attempts (
    router_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    cidr TEXT NOT NULL,
    refused INTEGER NOT NULL
);
"""

#: Seconds a writer waits for another one before giving up.
BUSY_TIMEOUT = 60.0


class RouterInterfaceConflict(exceptions.MuranoCidrException):
    """The model router refused a subnet: the collision the bug causes."""

    message = ("Bad router request: CIDR %(cidr)s of network %(owner)s "
               "overlaps with CIDR %(other_cidr)s of network "
               "%(other_owner)s on router %(router)s")


class ModelRouter(object):
    """Routers and their subnets, in a SQLite file shared by processes.

    The object can be passed to another process (it pickles to its path);
    each process opens its own connection on first use.

    :param path: the SQLite file; created with its table if missing.
    """

    def __init__(self, path):
        self.path = path
        self._conn = None

    @classmethod
    def create(cls, path):
        """Create the file, its table and WAL mode, before any engine runs.

        Engines opening a new file at the same moment could see SQLite
        refuse the switch to WAL ("database is locked") without waiting.

        :param path: the SQLite file.
        :returns: a :class:`ModelRouter`, its connection closed.
        """
        router = cls(path)
        router._connection()
        router.close()
        return router

    def __getstate__(self):
        return {"path": self.path}

    def __setstate__(self, state):
        self.__init__(state["path"])

    def _connection(self):
        if self._conn is None:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT,
                                   isolation_level=None)
            # NOTE: WAL lets every engine read while one writes, as reads of
            # Neutron's API would.
            conn.execute("PRAGMA journal_mode=WAL")
            # NOTE: a model needs no durability; skip the fsyncs.
            conn.execute("PRAGMA synchronous=OFF")
            conn.executescript(_SCHEMA)
            self._conn = conn
        return self._conn

    @contextlib.contextmanager
    def _write(self):
        conn = self._connection()
        with lockutils.lock("router", lock_file_prefix="murano-cidr-sim-",
                            external=True,
                            lock_path=os.path.dirname(
                                os.path.abspath(self.path))):
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def close(self):
        """Close this process's connection, if open."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def subnets(self, router_id):
        """Return the ``(owner, cidr)`` pairs plugged into a router.

        :param router_id: the router.
        :returns: a list of pairs, in the order they were added.
        """
        rows = self._connection().execute(
            "SELECT owner, cidr FROM router_subnets WHERE router_id = ? "
            "ORDER BY rowid", (router_id,))
        return [(owner, cidr) for owner, cidr in rows]

    def cidrs(self, router_id):
        """Return the CIDRs on a router: what an engine reads as ``taken``.

        :param router_id: the router.
        :returns: a list of CIDR strings.
        """
        return [cidr for _owner, cidr in self.subnets(router_id)]

    def reader(self, router_id):
        """Return a callable reading a router's CIDRs when called.

        Allocators call it at the moment they decide, as the contract
        allows.
        """
        return lambda: self.cidrs(router_id)

    def add_interface(self, router_id, owner, cidr):
        """Plug a subnet into a router, unless it overlaps one already there.

        :param router_id: the router.
        :param owner: the network the subnet belongs to.
        :param cidr: the subnet's CIDR string.
        :raises RouterInterfaceConflict: if ``cidr`` overlaps a subnet on
            the router; the router is unchanged, the attempt is kept
            (:meth:`refusals`).
        :raises murano_cidr.exceptions.InvalidCidr: if ``cidr`` is not a
            CIDR.
        """
        net = taken_mod.parse_cidr(cidr, "cidr")
        conflict = None
        with self._write() as conn:
            for other_owner, other_cidr in conn.execute(
                    "SELECT owner, cidr FROM router_subnets "
                    "WHERE router_id = ?", (router_id,)):
                other = taken_mod.parse_cidr(other_cidr, "router")
                if (other.version == net.version and other.first <= net.last
                        and net.first <= other.last):
                    conflict = RouterInterfaceConflict(
                        cidr=cidr, owner=owner, other_cidr=other_cidr,
                        other_owner=other_owner, router=router_id)
                    break
            else:
                conn.execute(
                    "INSERT INTO router_subnets (router_id, owner, cidr) "
                    "VALUES (?, ?, ?)", (router_id, owner, str(net)))
            # NOTE: every attempt is kept, refused or not, so a test can
            # count what happened after the subnets are gone.
            conn.execute(
                "INSERT INTO router_attempts (router_id, owner, cidr, "
                "refused) VALUES (?, ?, ?, ?)",
                (router_id, owner, str(net), conflict is not None))
        if conflict is not None:
            raise conflict

    def remove_interface(self, owner):
        """Unplug the subnet of a network, wherever it is; none is fine.

        :param owner: the network the subnet belongs to.
        """
        with self._write() as conn:
            conn.execute("DELETE FROM router_subnets WHERE owner = ?",
                         (owner,))

    def added(self, router_id):
        """Return how many subnets were ever plugged into a router.

        :param router_id: the router.
        """
        return self._connection().execute(
            "SELECT COUNT(*) FROM router_attempts WHERE router_id = ? AND "
            "NOT refused", (router_id,)).fetchone()[0]

    def refusals(self):
        """Return every refused attempt, oldest first.

        :returns: a list of ``(router_id, owner, cidr)``: the collisions
            the allocators under test caused.
        """
        return [tuple(row) for row in self._connection().execute(
            "SELECT router_id, owner, cidr FROM router_attempts WHERE "
            "refused ORDER BY rowid")]

    def seed(self, router_id, subnets):
        """Plug subnets that exist before an experiment, without checks.

        :param router_id: the router.
        :param subnets: ``(owner, cidr)`` pairs.
        """
        with self._write() as conn:
            conn.executemany(
                "INSERT INTO router_subnets (router_id, owner, cidr) "
                "VALUES (?, ?, ?)",
                [(router_id, owner, cidr) for owner, cidr in subnets])

    def delete(self, router_id):
        """Remove a router and its subnets."""
        with self._write() as conn:
            conn.execute("DELETE FROM router_subnets WHERE router_id = ?",
                         (router_id,))
