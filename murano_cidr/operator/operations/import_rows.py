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

"""The rows of an import file, kept on disk while ``import`` works.

A file of millions of rows is read once (it may be standard input), but its
rows are needed three times: checked against each other, compared with the
driver's allocations, written. :class:`Rows` keeps them in a temporary
SQLite file (Python's ``sqlite3``), so memory stays bounded by what one step
holds, not by the file, and the checks of one row against all others are
the database's index lookups and sorts.
"""

import dataclasses
import itertools
import json
import os
import sqlite3
import tempfile
import typing

import netaddr

from murano_cidr.engine import allocation as allocation_mod
from murano_cidr.operator import overlaps

#: Row states in a plan.
NEW = "new"
PRESENT = "present"
INVALID = "invalid"
CONFLICT = "conflict"
IMPORTED = "imported"
STATUSES = (NEW, PRESENT, INVALID, CONFLICT, IMPORTED)

#: Rows written or read at once.
BATCH = 10000

_COLUMNS = "n, place, status, reason, owner, cidr, scope, ip_version, given"
_SCHEMA = (
    "CREATE TABLE row (n INTEGER PRIMARY KEY, place TEXT, status TEXT, "
    "reason TEXT, owner TEXT, cidr TEXT, scope TEXT, ip_version INTEGER, "
    "given TEXT, first TEXT, last TEXT)")


@dataclasses.dataclass
class Row(object):
    """One row of an import file and what becomes of it.

    :ivar where: its place in the file (``line 4``, ``item 3``).
    :ivar allocation: the :class:`~murano_cidr.engine.allocation.Allocation`,
        or None if the row is invalid.
    :ivar status: :data:`NEW`, :data:`PRESENT`, :data:`INVALID`,
        :data:`CONFLICT` or :data:`IMPORTED`.
    :ivar reason: why, for anything but a new row.
    """

    where: str
    allocation: typing.Optional[allocation_mod.Allocation]
    status: str = NEW
    reason: str = ""
    #: What the file had for owner, cidr and scope, as text; shown for an
    #: invalid row (no allocation).
    given: dict = dataclasses.field(default_factory=dict)
    #: Its number in :class:`Rows`, from 1.
    number: int = dataclasses.field(default=0, compare=False)

    def shown(self):
        """Return ``(owner, cidr, scope)``: the allocation's, or the file's."""
        if self.allocation is not None:
            return (self.allocation.owner, self.allocation.cidr,
                    self.allocation.scope)
        return tuple(self.given.get(f) for f in ("owner", "cidr", "scope"))

    def to_dict(self):
        """Return the row as a JSON-friendly dictionary."""
        result = {"where": self.where, "status": self.status,
                  "reason": self.reason or None}
        result.update(self.given)
        if self.allocation is not None:
            result.update(owner=self.allocation.owner,
                          cidr=self.allocation.cidr,
                          scope=self.allocation.scope,
                          ip_version=self.allocation.ip_version)
        return result


def _key(address):
    # Fixed-width hexadecimal sorts as the address does, IPv6 included.
    return "%032x" % address


def _row(record):
    n, place, status, reason, owner, cidr, scope, ip_version, given = record
    allocation = None
    if cidr is not None:
        allocation = allocation_mod.Allocation(
            owner=owner, cidr=cidr, scope=scope, ip_version=ip_version,
            confirmed=True)
    return Row(place, allocation, status, reason or "",
               json.loads(given) if given else {}, n)


class Rows(object):
    """The rows of one import file, in file order, in a temporary file.

    Iterating yields :class:`Row` objects read back from the file: change a
    row's status with :meth:`mark`, not by assigning to it. Close it (or
    use it as a context manager) to remove the file.
    """

    def __init__(self):
        self._directory = tempfile.TemporaryDirectory(
            prefix="murano-cidr-import-")
        self._db = sqlite3.connect(
            os.path.join(self._directory.name, "rows.sqlite"))
        # A scratch file: nothing to recover after a crash.
        self._db.execute("PRAGMA journal_mode = OFF")
        self._db.execute("PRAGMA synchronous = OFF")
        self._db.execute(_SCHEMA)
        self._pending = []
        self._length = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Remove the temporary file."""
        if self._db is not None:
            self._db.close()
            self._db = None
            self._directory.cleanup()

    def add(self, row, network=None):
        """Append a :class:`Row` (as read: new or invalid).

        :param network: its allocation's :class:`netaddr.IPNetwork`, if
            the caller has it already.
        """
        a = row.allocation
        first = last = None
        if a is not None:
            net = network if network is not None else netaddr.IPNetwork(
                a.cidr)
            first, last = _key(net.first), _key(net.last)
        self._length += 1
        self._pending.append((
            self._length, row.where, row.status, row.reason or None,
            a.owner if a else None, a.cidr if a else None,
            a.scope if a else None, a.ip_version if a else None,
            json.dumps(row.given) if row.given else None, first, last))
        if len(self._pending) >= BATCH:
            self._flush()

    def _flush(self):
        if self._pending:
            with self._db:
                self._db.executemany(
                    "INSERT INTO row VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                    "?)", self._pending)
            self._pending = []

    def __len__(self):
        return self._length

    def __iter__(self):
        return self.select()

    def __getitem__(self, index):
        if index < 0:
            index += self._length
        self._flush()
        record = self._db.execute(
            "SELECT %s FROM row WHERE n = ?" % _COLUMNS,
            (index + 1,)).fetchone()
        if record is None:
            raise IndexError(index)
        return _row(record)

    def select(self, *statuses):
        """Yield the rows (of these statuses), in file order.

        Read :data:`BATCH` rows at a time, so :meth:`mark` may be called
        meanwhile.
        """
        self._flush()
        where = ""
        if statuses:
            where = "AND status IN (%s)" % ", ".join("?" * len(statuses))
        after = 0
        while True:
            records = self._db.execute(
                "SELECT %s FROM row WHERE n > ? %s ORDER BY n LIMIT %d"
                % (_COLUMNS, where, BATCH), (after,) + statuses).fetchall()
            if not records:
                return
            after = records[-1][0]
            for record in records:
                yield _row(record)

    def mark(self, changes):
        """Change rows' status and reason.

        :param changes: an iterable of ``(number, status, reason)``, with
            the ``number`` of a row from :meth:`select`.
        """
        self._flush()
        changes = iter(changes)
        while True:
            batch = [(status, reason or None, number)
                     for number, status, reason in itertools.islice(
                         changes, BATCH)]
            if not batch:
                return
            with self._db:
                self._db.executemany(
                    "UPDATE row SET status = ?, reason = ? WHERE n = ?",
                    batch)

    def mark_all(self, old, new):
        """Change the status of every row of status ``old`` to ``new``."""
        self._flush()
        with self._db:
            self._db.execute("UPDATE row SET status = ? WHERE status = ?",
                             (new, old))

    def count(self):
        """Count rows by status: a dictionary from every status."""
        self._flush()
        counts = dict.fromkeys(STATUSES, 0)
        counts.update(self._db.execute(
            "SELECT status, COUNT(*) FROM row GROUP BY status"))
        return counts

    def compare_live(self, existing):
        """Mark the new rows a live allocation already records or forbids.

        The live allocations are copied into the file's database as they
        are read, so memory holds one batch of them, and each row is
        compared by an index lookup: a row whose owner holds the same CIDR
        in the same scope becomes :data:`PRESENT`; one whose owner holds
        something else, or whose CIDR overlaps a live allocation of its
        scope, :data:`CONFLICT`.

        :param existing: an iterable of the live
            :class:`~murano_cidr.engine.allocation.Allocation` objects.
        """
        self._flush()
        self._db.execute(
            "CREATE TABLE live (owner TEXT, cidr TEXT, scope TEXT, "
            "ip_version INTEGER, first TEXT, last TEXT)")
        existing = iter(existing)
        while True:
            batch = [_live(a) for a in itertools.islice(existing, BATCH)]
            if not batch:
                break
            with self._db:
                self._db.executemany(
                    "INSERT INTO live VALUES (?, ?, ?, ?, ?, ?)", batch)
        with self._db:
            self._db.execute("CREATE INDEX live_owner ON live (owner)")
            self._db.execute("CREATE INDEX live_range ON live "
                             "(scope, ip_version, first)")
            for statement in _COMPARE:
                self._db.execute(statement)

    def check_duplicates(self):
        """Refuse a new row whose owner, or CIDR in its scope, came before.

        The second and later rows of an owner are :data:`INVALID`; then a
        row inside another of its scope that sorts before it (by first
        address, the wider first, then file order) is, naming the widest
        such row, as :func:`murano_cidr.operator.overlaps.scope_overlaps` does:
        the same pass (:func:`murano_cidr.operator.overlaps.inside`) over the
        rows in the database's order; what it finds goes to the file in
        batches.
        """
        self._flush()
        self._db.execute("CREATE INDEX row_owner ON row (owner, n)")
        with self._db:
            self._db.execute(_REPEATED)
        self._db.execute("CREATE TEMP TABLE inside (n INTEGER PRIMARY KEY, "
                         "reason TEXT)")
        records = self._db.execute(
            "SELECT n, place, owner, cidr, scope, ip_version, first, last "
            "FROM row WHERE status = ? AND scope IS NOT NULL "
            "ORDER BY scope, ip_version, first, last DESC, n", (NEW,))
        found = []
        # Fixed-width hexadecimal compares as the address does.
        for record, widest in overlaps.inside(
                (r[4:6], r[6], r[7], r) for r in records):
            found.append((record[0], "%s overlaps %s of owner %s (%s) in "
                          "scope %s" % (record[3], widest[3], widest[2],
                                        widest[1], record[4])))
            if len(found) >= BATCH:
                self._db.executemany("INSERT INTO inside VALUES (?, ?)",
                                     found)
                found = []
        with self._db:
            self._db.executemany("INSERT INTO inside VALUES (?, ?)", found)
            self._db.execute(
                "UPDATE row SET status = ?, reason = (SELECT reason FROM "
                "inside WHERE inside.n = row.n) WHERE n IN (SELECT n FROM "
                "inside)", (INVALID,))
            self._db.execute("DROP TABLE inside")


#: The first new row of an owner; its first row is never marked, so
#: rows marked meanwhile do not change it.
_FIRST = ("FROM row AS f WHERE f.owner = row.owner AND f.status = '%s' "
          "ORDER BY f.n LIMIT 1" % NEW)
#: :meth:`Rows.check_duplicates`: the second and later rows of an owner.
_REPEATED = (
    "UPDATE row SET status = '%s', reason = 'owner ' || owner || "
    "' appears again (first at ' || (SELECT f.place %s) || ')' "
    "WHERE status = '%s' AND n > (SELECT f.n %s)"
    % (INVALID, _FIRST, NEW, _FIRST))


def _live(allocation):
    net = netaddr.IPNetwork(allocation.cidr)
    return (allocation.owner, allocation.cidr, allocation.scope,
            allocation.ip_version, _key(net.first), _key(net.last))


#: The live allocation of a row's scope that starts last at or before the
#: row's end: live allocations of a scope never overlap, so it is the only
#: one that may overlap the row.
_BEFORE = ("FROM live AS l WHERE l.scope = row.scope AND l.ip_version = "
           "row.ip_version AND l.first <= row.last ORDER BY l.first DESC "
           "LIMIT 1")
_HELD = "FROM live AS l WHERE l.owner = row.owner"
#: :meth:`Rows.compare_live`, in this order.
_COMPARE = (
    "UPDATE row SET status = '%s', reason = 'already recorded' "
    "WHERE status = '%s' AND EXISTS (SELECT 1 %s AND l.cidr = row.cidr "
    "AND l.scope IS row.scope)" % (PRESENT, NEW, _HELD),
    "UPDATE row SET status = '%s', reason = 'owner ' || owner || "
    "' already holds ' || (SELECT l.cidr %s) || ' in scope ' || "
    "(SELECT COALESCE(l.scope, '-') %s) WHERE status = '%s' AND "
    "EXISTS (SELECT 1 %s)" % (CONFLICT, _HELD, _HELD, NEW, _HELD),
    "UPDATE row SET status = '%s', reason = (SELECT 'overlaps ' || l.cidr "
    "|| ' held by owner ' || l.owner || ' in scope ' || row.scope %s) "
    "WHERE status = '%s' AND scope IS NOT NULL AND (SELECT l.last %s) >= "
    "first" % (CONFLICT, _BEFORE, NEW, _BEFORE),
)
