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

"""The SQL of the ``db`` driver's allocations: one function per statement.

Every function takes an open connection inside a transaction
(:meth:`murano_cidr.engine.drivers.db.api.Database.write` or ``read``) and uses
SQLAlchemy Core only, the same on SQLite, MySQL/MariaDB and PostgreSQL;
a statement with variants is built once and cached. What only the
commands run is in :mod:`murano_cidr.operator.drivers.db.records`. How the
statements find overlaps, and whose clock they read:
``doc/source/contributor/drivers.rst``.
"""

import functools

import sqlalchemy as sa

from murano_cidr.engine.drivers.db import compat
from murano_cidr.engine.drivers.db import models

ALLOCATIONS = models.Allocation.__table__
SCOPES = models.Scope.__table__

#: The columns of an :class:`~murano_cidr.engine.allocation.Allocation`.
COLUMNS = (ALLOCATIONS.c.owner, ALLOCATIONS.c.scope,
           ALLOCATIONS.c.ip_version, ALLOCATIONS.c.cidr,
           ALLOCATIONS.c.range_first, ALLOCATIONS.c.range_last,
           ALLOCATIONS.c.confirmed, ALLOCATIONS.c.created_at)
#: A released row, held back.
HELD = ALLOCATIONS.c.released_at.isnot(None)


def scope_is(scope):
    """The condition on a row's scope (None: the rows without one)."""
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

    Its row is updated (made if missing): every other writer of the scope
    waits until this transaction ends (on Galera, conflicts at commit).
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


_GET = compat.select(*COLUMNS).where(
    ALLOCATIONS.c.owner == sa.bindparam("owner"))


def get(conn, owner):
    """Return the row of ``owner``, or None."""
    return conn.execute(_GET, {"owner": owner}).first()


def _containing_starts(first, ip_version):
    """Where a CIDR containing ``first`` may start before it."""
    width = 32 if ip_version == 4 else 128
    return sorted({models.address_key(first & ~((1 << bits) - 1))
                   for bits in range(1, width + 1)} -
                  {models.address_key(first)})


def _start_params(first, ip_version):
    starts = _containing_starts(first, ip_version)
    return len(starts), {"start%d" % i: s for i, s in enumerate(starts)}


def _in_scope(null_scope):
    if null_scope:
        scope = ALLOCATIONS.c.scope.is_(None)
    else:
        scope = ALLOCATIONS.c.scope == sa.bindparam("scope")
    return (scope, ALLOCATIONS.c.ip_version == sa.bindparam("ip_version"))


#: Whether a row may be deleted if ``taken`` does not show it: released
#: longer than ``grace`` seconds ago, or an unconfirmed reservation made
#: longer than ``timeout`` seconds ago (its engine died before its subnet
#: reached the router), by the server's clock.
_RECLAIMABLE = sa.or_(
    ALLOCATIONS.c.released_at <= models.utc_now(sa.bindparam("grace")),
    sa.and_(ALLOCATIONS.c.released_at.is_(None),
            ALLOCATIONS.c.confirmed == sa.false(),
            ALLOCATIONS.c.created_at
            <= models.utc_now(sa.bindparam("timeout"))))


@functools.lru_cache(maxsize=None)
def _window_statement(starts, with_owner, null_scope):
    """Build (once) the statement of :func:`read_window`."""
    columns = (ALLOCATIONS.c.id, ALLOCATIONS.c.range_first,
               ALLOCATIONS.c.range_last, ALLOCATIONS.c.cidr,
               ALLOCATIONS.c.owner, ALLOCATIONS.c.released_at,
               compat.case((_RECLAIMABLE, 1), else_=0).label("reclaimable"))

    def select(kind, *where):
        return compat.select(sa.literal_column("'%s'" % kind).label("kind"),
                             *columns).where(sa.and_(*where))

    in_scope = _in_scope(null_scope)
    selects = [select("w", *in_scope, ALLOCATIONS.c.range_first.between(
        sa.bindparam("lo"), sa.bindparam("hi")))]
    # NOTE: one select per possible start, not an IN or an OR: why, in
    # doc/source/contributor/drivers.rst.
    selects.extend(select("w", *in_scope, ALLOCATIONS.c.range_first
                          == sa.bindparam("start%d" % i))
                   for i in range(starts))
    if with_owner:
        selects.append(select("o", ALLOCATIONS.c.owner
                              == sa.bindparam("owner")))
    return selects[0] if len(selects) == 1 else sa.union_all(*selects)


def read_window(conn, scope, ip_version, first, last, owner=None, grace=0,
                timeout=0):
    """Return the rows of a scope that overlap ``[first, last]``.

    :param first: first address, as an integer.
    :param last: last address, as an integer.
    :param owner: if given, also tell whether this owner holds a CIDR.
    :param grace: ``release_grace``, for the ``reclaimable`` column.
    :param timeout: ``reservation_timeout``, for it too.
    :returns: ``(rows, held)``: the rows (``id``, ``range_first``,
        ``range_last``, ``cidr``, ``owner``, ``released_at``,
        ``reclaimable``; released rows included) sorted by
        ``range_first``, and whether ``owner`` holds a CIDR.
    """
    lo = models.address_key(first)
    params = {"scope": scope, "ip_version": ip_version, "lo": lo,
              "hi": models.address_key(last), "owner": owner,
              "grace": grace, "timeout": timeout}
    starts, start_params = _start_params(first, ip_version)
    params.update(start_params)
    statement = _window_statement(starts, owner is not None, scope is None)
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
           "range_last", "confirmed")


@functools.lru_cache(maxsize=None)
def _insert_if_free_statement(starts):
    """Build (once) the statement of :func:`insert_if_free`.

    :param starts: how many possible earlier starts are looked up; None
        for the scope None, whose rows may overlap.
    """
    values = [sa.bindparam(name, type_=ALLOCATIONS.c[name].type)
              for name in _VALUES] + [models.utc_now()]
    absent = [~sa.exists().where(ALLOCATIONS.c.owner
                                 == sa.bindparam("owner"))]
    if starts is not None:
        in_scope = _in_scope(False)
        first = sa.bindparam("range_first")
        absent.append(~sa.exists().where(sa.and_(
            *in_scope, ALLOCATIONS.c.range_first.between(
                first, sa.bindparam("range_last")))))
        absent.extend(~sa.exists().where(sa.and_(
            *in_scope, ALLOCATIONS.c.range_first
            == sa.bindparam("start%d" % i), ALLOCATIONS.c.range_last >= first))
            for i in range(starts))
    return sa.insert(ALLOCATIONS).from_select(
        list(_VALUES) + ["created_at"],
        compat.select(*values).where(sa.and_(*absent)))


def insert_if_free(conn, values):
    """Insert an unconfirmed allocation if nothing forbids it.

    One statement: the row is inserted only if its owner holds no CIDR
    and, in a named scope, no row of the scope (live or released, whoever
    wrote it) overlaps it: the same index lookups as :func:`read_window`,
    made by the database. Call it holding the scope's lock.

    :param values: the column values, from :func:`row_values`
        (``created_at`` is the server's time).
    :returns: True if the row was inserted.
    """
    params = {name: values[name] for name in _VALUES}
    starts = None
    if values["scope"] is not None:
        starts, start_params = _start_params(
            int(values["range_first"], 16), values["ip_version"])
        params.update(start_params)
    return conn.execute(_insert_if_free_statement(starts),
                        params).rowcount == 1


def row_values(owner, scope, ip_version, network, confirmed, created_at=None):
    """Return the column values of an allocation of ``network``."""
    return {"owner": owner, "scope": scope, "ip_version": ip_version,
            "cidr": str(network),
            "range_first": models.address_key(network.first),
            "range_last": models.address_key(network.last),
            "confirmed": confirmed, "created_at": created_at}


def reclaim(conn, ids, grace, timeout):
    """Delete the rows :func:`read_window` said are reclaimable.

    Call it with the scope's row lock held, after reading ``taken``; a row
    confirmed since is left alone.

    :returns: how many rows were deleted.
    """
    return conn.execute(sa.delete(ALLOCATIONS).where(sa.and_(
        ALLOCATIONS.c.id.in_(sorted(ids)), _RECLAIMABLE)),
        {"grace": grace, "timeout": timeout}).rowcount


def delete(conn, owner):
    """Delete the row of ``owner``; True if there was one."""
    return conn.execute(sa.delete(ALLOCATIONS).where(
        ALLOCATIONS.c.owner == owner)).rowcount > 0


def confirm(conn, owner, cidr=None):
    """Confirm the row of ``owner`` (holding ``cidr``); True if it exists."""
    held = ALLOCATIONS.c.owner == owner
    if cidr is not None:
        held = sa.and_(held, ALLOCATIONS.c.cidr == cidr)
    return conn.execute(sa.update(ALLOCATIONS).where(held).values(
        confirmed=True)).rowcount > 0


_LOCK_OWNER_SCOPE = (
    sa.update(SCOPES).where(SCOPES.c.scope == compat.scalar_subquery(
        compat.select(ALLOCATIONS.c.scope).where(
            ALLOCATIONS.c.owner == sa.bindparam("owner"))))
    .values(generation=SCOPES.c.generation + 1))


def release(conn, owner):
    """Release the allocation of ``owner``: hold it back, or delete it.

    An allocation of a scope takes the scope's lock (so no allocation
    reads ``taken`` before it and frees it after), then is marked
    released at the server's time, its range still occupied. One without
    a scope is deleted.

    :returns: True if ``owner`` held an allocation.
    """
    conn.execute(_LOCK_OWNER_SCOPE, {"owner": owner})
    result = conn.execute(
        sa.update(ALLOCATIONS).where(sa.and_(
            ALLOCATIONS.c.owner == owner, ALLOCATIONS.c.scope.isnot(None)))
        .values(owner=None, released_owner=owner,
                released_at=models.utc_now()))
    return result.rowcount > 0 or delete(conn, owner)
