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

"""The SQL of the ``db`` driver: one function per statement or question.

Every function takes an open connection inside a transaction
(:meth:`murano_cidr.drivers.db.api.Database.write` or ``read``) and uses
SQLAlchemy Core only, the same on SQLite, MySQL/MariaDB and PostgreSQL.

Every row is a CIDR, so "what overlaps [first, last]?" is the rows
starting inside the range plus the CIDRs containing ``first``, whose first
address can only be ``first`` with some host bits cleared: index lookups
(a range and equalities on the unique key), whatever the number of rows.
"""

import datetime
import functools

import sqlalchemy as sa

from murano_cidr import allocation
from murano_cidr.drivers.db import models

ALLOCATIONS = models.Allocation.__table__
SCOPES = models.Scope.__table__

#: Owners looked up per statement when many are read at once.
CHUNK = 500

_COLUMNS = (ALLOCATIONS.c.owner, ALLOCATIONS.c.scope,
            ALLOCATIONS.c.ip_version, ALLOCATIONS.c.cidr,
            ALLOCATIONS.c.range_first, ALLOCATIONS.c.range_last,
            ALLOCATIONS.c.confirmed, ALLOCATIONS.c.created_at)


def utcnow():
    """Return the time to record: naive UTC, whole seconds.

    Whole seconds, because MySQL's DATETIME keeps no fraction: every
    backend then returns what was written.
    """
    now = datetime.datetime.now(datetime.timezone.utc)
    return now.replace(tzinfo=None, microsecond=0)


def to_allocation(row):
    """Turn a row into a :class:`~murano_cidr.allocation.Allocation`."""
    created_at = row.created_at
    if created_at is not None and created_at.tzinfo is None:
        created_at = created_at.replace(tzinfo=datetime.timezone.utc)
    return allocation.Allocation(
        owner=row.owner, cidr=row.cidr, scope=row.scope,
        ip_version=row.ip_version, confirmed=bool(row.confirmed),
        created_at=created_at)


def _scope_is(scope):
    if scope is None:
        return ALLOCATIONS.c.scope.is_(None)
    return ALLOCATIONS.c.scope == scope


_LOCK_SCOPE = (sa.update(SCOPES)
               .where(SCOPES.c.scope == sa.bindparam("lock_scope"))
               .values(generation=SCOPES.c.generation + 1))
_CREATE_SCOPE = sa.insert(SCOPES).values(scope=sa.bindparam("lock_scope"),
                                         generation=0)


def lock_scope(conn, scope, create=True):
    """Take the scope's row lock for the rest of the transaction.

    The scope's row is updated (``generation`` is only the column the
    ``UPDATE`` writes), which makes every other writer of the scope wait
    until this transaction ends, and, on Galera, makes two such
    transactions on different nodes conflict at commit. A scope without a
    row gets one; two transactions creating it at once conflict on its key.

    Call it before reading anything it protects.

    :param create: whether to create the row of a scope that has none.
    :returns: True if the scope's row exists (and is now locked).
    """
    params = {"lock_scope": scope}
    if conn.execute(_LOCK_SCOPE, params).rowcount:
        return True
    if not create:
        return False
    conn.execute(_CREATE_SCOPE, params)
    return True


_GET = sa.select(*_COLUMNS).where(ALLOCATIONS.c.owner == sa.bindparam("owner"))


def get(conn, owner):
    """Return the row of ``owner``, or None."""
    return conn.execute(_GET, {"owner": owner}).first()


def get_many(conn, owners):
    """Return the rows of several owners, as a dictionary by owner."""
    result = {}
    owners = sorted(set(owners))
    for i in range(0, len(owners), CHUNK):
        chunk = owners[i:i + CHUNK]
        for row in conn.execute(sa.select(*_COLUMNS).where(
                ALLOCATIONS.c.owner.in_(chunk))):
            result[row.owner] = row
    return result


def list_rows(conn, scope=None):
    """Return every live row (not released), or those of one scope."""
    stmt = sa.select(*_COLUMNS).where(ALLOCATIONS.c.released_at.is_(None))
    if scope is not None:
        stmt = stmt.where(ALLOCATIONS.c.scope == scope)
    return conn.execute(stmt).fetchall()


def _containing_starts(first, ip_version):
    """Return where a CIDR containing address ``first`` may start before it.

    A CIDR holding ``first`` starts at ``first`` with its host bits
    cleared, so there are at most 32 (IPv4) or 128 (IPv6) such places.
    """
    width = 32 if ip_version == 4 else 128
    starts = set()
    for bits in range(1, width + 1):
        start = first & ~((1 << bits) - 1)
        if start < first:
            starts.add(models.address_key(start))
    return sorted(starts)


def _in_scope(null_scope):
    if null_scope:
        scope = ALLOCATIONS.c.scope.is_(None)
    else:
        scope = ALLOCATIONS.c.scope == sa.bindparam("scope")
    return (scope, ALLOCATIONS.c.ip_version == sa.bindparam("ip_version"))


@functools.lru_cache(maxsize=None)
def _window_statement(starts, with_owner, null_scope, detail):
    """Build (once) the statement of :func:`read_window`.

    :param starts: how many possible earlier starts are looked up.
    :param with_owner: whether the owner's own row is read too.
    :param null_scope: whether the scope is None (``IS NULL``).
    :param detail: whether ``cidr`` and ``owner`` are read too.
    """
    # NOTE: released_at, so that the search can tell a released row it may
    # free (see murano_cidr.drivers.db.releasing) from a live one.
    columns = (ALLOCATIONS.c.range_first, ALLOCATIONS.c.range_last,
               ALLOCATIONS.c.released_at)
    if detail:
        columns += (ALLOCATIONS.c.cidr, ALLOCATIONS.c.owner)

    def select(kind, *where):
        return sa.select(sa.literal_column("'%s'" % kind).label("kind"),
                         *columns).where(*where)

    in_scope = _in_scope(null_scope)
    selects = [select("w", *in_scope, ALLOCATIONS.c.range_first.between(
        sa.bindparam("lo"), sa.bindparam("hi")))]
    # NOTE: one select per possible start, each an equality on the whole
    # unique key, rather than an IN, an OR or "the last row starting
    # before": every planner answers those from the index, even before the
    # table's statistics exist, where MariaDB would scan the index
    # backwards over the rows before the window, and PostgreSQL would
    # filter the whole scope of a freshly filled table.
    selects.extend(select("w", *in_scope, ALLOCATIONS.c.range_first
                          == sa.bindparam("start%d" % i))
                   for i in range(starts))
    if with_owner:
        selects.append(select("o", ALLOCATIONS.c.owner
                              == sa.bindparam("owner")))
    return selects[0] if len(selects) == 1 else sa.union_all(*selects)


def _start_params(first, ip_version):
    starts = _containing_starts(first, ip_version)
    return len(starts), {"start%d" % i: start
                         for i, start in enumerate(starts)}


def read_window(conn, scope, ip_version, first, last, owner=None,
                detail=False):
    """Return the rows of a scope that overlap ``[first, last]``.

    The rows starting inside the range, and the CIDRs that start before it
    and contain ``first`` (each possible first address of a CIDR holding
    ``first``, looked up by equality): index lookups only, in one
    statement, whatever the number of rows.

    :param first: first address, as an integer.
    :param last: last address, as an integer.
    :param owner: if given, also tell whether this owner holds a CIDR, in
        the same statement.
    :param detail: also read each row's ``cidr`` and ``owner``.
    :returns: ``(rows, held)``: the rows (``range_first``, ``range_last``,
        ``released_at``, with ``detail`` also ``cidr`` and ``owner``;
        released rows included) sorted by
        ``range_first``, and whether ``owner`` holds a CIDR.
    """
    lo = models.address_key(first)
    params = {"scope": scope, "ip_version": ip_version, "lo": lo,
              "hi": models.address_key(last), "owner": owner}
    starts, start_params = _start_params(first, ip_version)
    params.update(start_params)
    statement = _window_statement(starts, owner is not None, scope is None,
                                  detail)
    rows = []
    held = False
    for row in conn.execute(statement, params):
        if row.kind == "o":
            held = True
        elif row.range_last >= lo:
            rows.append(row)
    rows.sort(key=lambda row: row.range_first)
    return rows, held


_VALUES = ("owner", "scope", "ip_version", "cidr", "range_first",
           "range_last", "confirmed", "created_at")


@functools.lru_cache(maxsize=None)
def _insert_if_free_statement(starts):
    """Build (once) the statement of :func:`insert_if_free`.

    :param starts: how many possible earlier starts are looked up; None
        for the scope None, whose rows may overlap.
    """
    values = [sa.bindparam(name, type_=ALLOCATIONS.c[name].type)
              for name in _VALUES]
    absent = [~sa.exists().where(ALLOCATIONS.c.owner
                                 == sa.bindparam("owner"))]
    if starts is not None:
        in_scope = _in_scope(False)
        first = sa.bindparam("range_first")
        # NOTE: Exists.where() takes one clause on SQLAlchemy 1.4.
        absent.append(~sa.exists().where(sa.and_(
            *in_scope, ALLOCATIONS.c.range_first.between(
                first, sa.bindparam("range_last")))))
        # NOTE: an equality per possible start, as in _window_statement.
        absent.extend(~sa.exists().where(sa.and_(
            *in_scope, ALLOCATIONS.c.range_first
            == sa.bindparam("start%d" % i), ALLOCATIONS.c.range_last >= first))
            for i in range(starts))
    return sa.insert(ALLOCATIONS).from_select(
        list(_VALUES), sa.select(*values).where(*absent))


def insert_if_free(conn, values):
    """Insert an allocation if nothing forbids it, in one statement.

    The row is inserted only if its owner holds no CIDR and, in a named
    scope, no row of the scope overlaps it: the same index lookups as
    :func:`read_window`, made by the database as part of the ``INSERT``.
    Call it holding the scope's lock (:func:`lock_scope`).

    :param values: the column values, from :func:`row_values`.
    :returns: True if the row was inserted; False if the owner holds a
        CIDR or the range is not free.
    """
    params = dict(values)
    starts = None
    if values["scope"] is not None:
        starts, start_params = _start_params(
            int(values["range_first"], 16), values["ip_version"])
        params.update(start_params)
    return conn.execute(_insert_if_free_statement(starts),
                        params).rowcount == 1


_INSERT = sa.insert(ALLOCATIONS)


def held_between(conn, scope, ip_version, first, last, detail=False):
    """Return the rows of a scope that overlap ``[first, last]``.

    See :func:`read_window`.
    """
    return read_window(conn, scope, ip_version, first, last,
                       detail=detail)[0]


def count(conn, scope, ip_version):
    """Return how many live allocations a scope holds in one IP version."""
    return conn.execute(
        sa.select(sa.func.count()).select_from(ALLOCATIONS).where(
            _scope_is(scope), ALLOCATIONS.c.ip_version == ip_version,
            ALLOCATIONS.c.released_at.is_(None))
    ).scalar()


def insert(conn, allocations):
    """Insert allocations.

    :param allocations: dictionaries with every column but ``id``.
    """
    if allocations:
        conn.execute(_INSERT, allocations)


def row_values(owner, scope, ip_version, network, confirmed, created_at):
    """Return the column values of an allocation of ``network``.

    :param network: a :class:`netaddr.IPNetwork` without host bits.
    """
    return {"owner": owner, "scope": scope, "ip_version": ip_version,
            "cidr": str(network),
            "range_first": models.address_key(network.first),
            "range_last": models.address_key(network.last),
            "confirmed": confirmed, "created_at": created_at}


def delete(conn, owner):
    """Delete the row of ``owner``; return True if there was one."""
    result = conn.execute(sa.delete(ALLOCATIONS).where(
        ALLOCATIONS.c.owner == owner))
    return result.rowcount > 0


def delete_scope(conn, scope):
    """Delete every row of a scope; the scope's own row stays.

    The scope's row is locked first, like an allocation's, and stays.

    :returns: how many allocations were deleted.
    """
    if scope is not None:
        lock_scope(conn, scope, create=False)
    result = conn.execute(sa.delete(ALLOCATIONS).where(_scope_is(scope)))
    return result.rowcount


def confirm(conn, owner):
    """Mark the allocation of ``owner`` confirmed; True if there is one."""
    result = conn.execute(
        sa.update(ALLOCATIONS).where(ALLOCATIONS.c.owner == owner)
        .values(confirmed=True))
    return result.rowcount > 0
