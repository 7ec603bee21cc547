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

"""A model of Neutron routers, shared by processes through an SQLite file.

Adding a subnet that overlaps one already on the router is refused, as
Neutron refuses to plug it, and the attempt is recorded as a collision: the
one thing the allocators under test must never cause.
"""

import sqlite3

import netaddr

_SCHEMA = """
CREATE TABLE IF NOT EXISTS subnets (
    owner TEXT PRIMARY KEY, router TEXT NOT NULL, cidr TEXT NOT NULL,
    first INTEGER NOT NULL, last INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS collisions (
    owner TEXT NOT NULL, router TEXT NOT NULL, cidr TEXT NOT NULL,
    other_owner TEXT NOT NULL, other_cidr TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS created (
    owner TEXT NOT NULL, router TEXT NOT NULL, cidr TEXT NOT NULL);
"""


class Overlap(Exception):
    """The subnet overlaps one already on the router."""


class ModelRouter(object):
    """Routers and their subnets in an SQLite file.

    :param path: the database file; created if missing.
    """

    def __init__(self, path):
        self.path = path
        # NOTE: one connection per object, used by one thread; writers are
        # serialised by BEGIN IMMEDIATE, so check-then-insert is atomic.
        self._db = sqlite3.connect(path, timeout=60, isolation_level=None)
        self._db.executescript(_SCHEMA)

    def close(self):
        self._db.close()

    def add(self, router, cidr, owner):
        """Plug a subnet into a router.

        :raises Overlap: if it overlaps a subnet on the router; the attempt
            is recorded as a collision.
        """
        net = netaddr.IPNetwork(cidr)
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute(
                "SELECT owner, cidr FROM subnets WHERE router = ? AND "
                "first <= ? AND last >= ?",
                (router, net.last, net.first)).fetchone()
            if row is not None:
                db.execute("INSERT INTO collisions VALUES (?, ?, ?, ?, ?)",
                           (owner, router, cidr, row[0], row[1]))
                db.execute("COMMIT")
                raise Overlap("%s of %s overlaps %s of %s on %s"
                              % (cidr, owner, row[1], row[0], router))
            db.execute("INSERT INTO subnets VALUES (?, ?, ?, ?, ?)",
                       (owner, router, cidr, net.first, net.last))
            db.execute("INSERT INTO created VALUES (?, ?, ?)",
                       (owner, router, cidr))
            db.execute("COMMIT")
        except sqlite3.Error:
            db.execute("ROLLBACK")
            raise

    def remove(self, owner):
        """Delete the subnet of ``owner``, if any."""
        self._db.execute("DELETE FROM subnets WHERE owner = ?", (owner,))

    def cidrs(self, router):
        """Return the CIDRs on ``router``: what Murano passes as taken."""
        return [r[0] for r in self._db.execute(
            "SELECT cidr FROM subnets WHERE router = ?", (router,))]

    def collisions(self):
        """Return every refused subnet, as tuples."""
        return self._db.execute("SELECT * FROM collisions").fetchall()

    def created(self, router):
        """Return how many subnets were ever plugged into ``router``."""
        return self._db.execute(
            "SELECT COUNT(*) FROM created WHERE router = ?",
            (router,)).fetchone()[0]
