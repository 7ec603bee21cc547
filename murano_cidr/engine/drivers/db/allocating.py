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

"""One allocation of the ``db`` driver, and the SQL of its rows.

:func:`allocate` is one transaction: lock the scope (1), read ``taken``
(2), draw a candidate (3), insert it if the database finds it free (4),
else read the rows around it, free what may go and draw again (5). A row
is inserted only where no row of its scope overlaps it and its owner holds
none, decided by the database under the scope's row lock. Each statement
is SQLAlchemy Core, built once, run on a connection in a transaction
(:meth:`.api.Database.write`). Why so: ``doc/source/reference/db-driver.rst``.
"""

import functools
import secrets

from oslo_db import exception as db_exc
import sqlalchemy as sa

from murano_cidr.engine.drivers.db import compat
from murano_cidr.engine.drivers.db import hints as hints_mod
from murano_cidr.engine.drivers.db import models
from murano_cidr.engine import taken as taken_mod
from murano_cidr import exceptions
from murano_cidr import messages

#: Candidates read around a drawn candidate that turned out to be used.
WINDOW = 16
#: Used candidates drawn in a row after which the scope is read in full.
MAX_MISSES = 3

# NOTE: the operating system's randomness, so forked engines never share a
# seed and never start their searches at the same place.
_RANDOM = secrets.SystemRandom()

ALLOCATIONS = models.ALLOCATIONS
SCOPES = models.SCOPES


def address_key(address):
    """Return the stored, sortable form of an integer address (32 hex)."""
    return "%032x" % address


def allocate(conn, hints, owner, scope, pool, taken, taken_set, ages,
             exhausted):
    """Allocate a CIDR in one transaction.

    :param hints: the driver's :class:`~.hints.Hints`.
    :param taken: what the caller gave: a callable is read under the lock.
    :param taken_set: ``taken`` read already (a collection), or None.
    :param ages: ``(release_grace, reservation_timeout)`` in seconds.
    :param exhausted: ``exhausted(conn, pool, scope, taken_set)`` returns
        the error to raise when no candidate is free.
    :returns: ``(cidr, new)``: the CIDR inserted (``new``), or the one the
        owner holds.
    :raises murano_cidr.exceptions.OwnerConflict: if the owner holds a
        CIDR of another scope or IP version.
    :raises murano_cidr.exceptions.InvalidArgument: if the database cannot
        store the owner or scope.
    """
    if scope is not None:
        lock_scope(conn, scope)                                     # 1.
    if taken_set is None:
        taken_set = taken_mod.TakenSet.from_taken(taken, pool.version)  # 2.
    taken_map = pool.free_map(taken_set)
    if scope is None:
        free = taken_map.free
        index = taken_map.nth_free(_RANDOM.randrange(free)) if free else None
        cidr = _insert(conn, owner, None, pool, index)
    else:
        cidr = _search(conn, hints, owner, scope, pool, taken_set,
                       taken_map, ages)
    if cidr is not None:
        return cidr, True
    row = get(conn, owner)
    if row is None:
        raise exhausted(conn, pool, scope, taken_set)
    if row.scope != scope or row.ip_version != pool.version:
        raise exceptions.OwnerConflict(
            owner=owner, cidr=row.cidr,
            scope=row.scope if row.scope is not None else "(none)")
    return row.cidr, False


def _search(conn, hints, owner, scope, pool, taken_set, taken_map, ages):
    """Steps 3 to 5 in a named scope: the CIDR inserted, or None."""
    hint = hints.get(scope, pool)
    complete = hint is None
    if complete:
        hint = read_scope(conn, hints, pool, scope, taken_set, ages)
    misses = 0
    while True:
        index = hint.pick(taken_map, _RANDOM)                       # 3.
        if index is None:
            if complete or not taken_map.free:
                return None
            hint = read_scope(conn, hints, pool, scope, taken_set, ages)
            complete = True
            continue
        cidr = _insert(conn, owner, scope, pool, index)             # 4.
        if cidr is not None:
            return cidr
        lo, hi = window(pool, index)                                # 5.
        rows, held = read_window(
            conn, scope, pool.version, pool.first_address(lo),
            pool[hi].last, owner=owner, grace=ages[0], timeout=ages[1])
        if held:
            return None
        if not _learn(conn, hint, lo, hi, rows, taken_set, ages):
            # Whatever the rows said, this candidate is not drawn again.
            hint.block(index)
        misses += 1
        if misses >= MAX_MISSES and not complete:
            hint = read_scope(conn, hints, pool, scope, taken_set, ages)
            complete = True


def _insert(conn, owner, scope, pool, index):
    """Insert candidate ``index`` unless the database finds it used."""
    if index is None:
        return None
    network = pool[index]
    try:
        inserted = insert_if_free(conn, row_values(
            owner, scope, pool.version, network, False))
    except (db_exc.DBDataError, db_exc.DBInvalidUnicodeParameter) as e:
        raise exceptions.InvalidArgument(
            name="owner or scope", value=owner if scope is None else
            "%s (scope %s)" % (owner, scope),
            reason="the database cannot store it (%s)"
            % messages.one_line(e))
    return str(network) if inserted else None


def _learn(conn, hint, lo, hi, rows, taken_set, ages):
    """Free what may go of ``rows``, teach the hint the rest; how many."""
    freeable = {row.id for row in rows if row.reclaimable and not
                taken_set.overlaps(int(row.range_first, 16),
                                   int(row.range_last, 16))}
    freed = reclaim(conn, freeable, *ages) if freeable else 0
    hint.learn(lo, hi, taken_mod.TakenSet(hint.pool.version, [
        (int(r.range_first, 16), int(r.range_last, 16))
        for r in rows if r.id not in freeable]))
    return freed


def read_scope(conn, hints, pool, scope, taken_set, ages):
    """Read the scope's rows in the pool, free what may go; keep a hint.

    Call it holding the scope's lock, ``taken`` read after it.

    :returns: the new :class:`~.hints.Hint`.
    """
    hint = hints_mod.Hint(pool, taken_mod.TakenSet(pool.version))
    for network, lo, hi in _networks(pool):
        rows = read_window(conn, scope, pool.version, network.first,
                           network.last, grace=ages[0], timeout=ages[1])[0]
        _learn(conn, hint, lo, hi, rows, taken_set, ages)
    hints.keep(scope, hint)
    return hint


def _networks(pool):
    """Each network of the pool, with its first and last candidate."""
    lo = 0
    for network in pool.networks:
        hi = lo + 2 ** (pool.prefixlen - network.prefixlen) - 1
        yield network, lo, hi
        lo = hi + 1


def window(pool, index):
    """The candidates read around ``index``, within its pool network."""
    for _network, _lo, hi in _networks(pool):
        if index <= hi:
            return index, min(index + WINDOW - 1, hi)


# -- the statements ---------------------------------------------------------

_LOCK_SCOPE = (sa.update(SCOPES)
               .where(SCOPES.c.scope == sa.bindparam("lock_scope"))
               .values(generation=SCOPES.c.generation + 1))
_CREATE_SCOPE = sa.insert(SCOPES).values(scope=sa.bindparam("lock_scope"),
                                         generation=0)


def lock_scope(conn, scope, create=True):
    """Take the scope's row lock until the transaction ends (Galera: commit).

    :param create: whether to create the row of a scope that has none.
    :returns: True if the scope's row exists (and is now locked).
    """
    params = {"lock_scope": scope}
    if conn.execute(_LOCK_SCOPE, params).rowcount:
        return True
    if create:
        conn.execute(_CREATE_SCOPE, params)
    return create


_GET = compat.select(*models.COLUMNS).where(
    ALLOCATIONS.c.owner == sa.bindparam("owner"))


def get(conn, owner):
    """Return the row of ``owner``, or None."""
    return conn.execute(_GET, {"owner": owner}).first()


def _starts(first, ip_version, params):
    """Add where a CIDR containing ``first`` may start before it.

    :returns: how many starts were added (``start0``...).
    """
    key = address_key(first)
    starts = sorted({address_key(first & ~((1 << bits) - 1)) for bits in
                     range(1, (32 if ip_version == 4 else 128) + 1)} - {key})
    params.update(("start%d" % i, s) for i, s in enumerate(starts))
    return len(starts)


def _in_scope(null_scope):
    scope = (ALLOCATIONS.c.scope.is_(None) if null_scope
             else ALLOCATIONS.c.scope == sa.bindparam("scope"))
    return (scope, ALLOCATIONS.c.ip_version == sa.bindparam("ip_version"))


#: Deletable unless ``taken`` shows it: released over ``grace`` seconds
#: ago, or unconfirmed for over ``timeout`` seconds (the server's clock).
_RECLAIMABLE = sa.or_(
    ALLOCATIONS.c.released_at <= models.utc_now(sa.bindparam("grace")),
    sa.and_(ALLOCATIONS.c.released_at.is_(None),
            ALLOCATIONS.c.confirmed == sa.false(),
            ALLOCATIONS.c.created_at
            <= models.utc_now(sa.bindparam("timeout"))))


@functools.lru_cache(maxsize=None)
def _window_statement(starts, with_owner, null_scope):
    columns = (ALLOCATIONS.c.id, ALLOCATIONS.c.range_first,
               ALLOCATIONS.c.range_last, ALLOCATIONS.c.cidr,
               ALLOCATIONS.c.owner, ALLOCATIONS.c.released_at,
               compat.case((_RECLAIMABLE, 1), else_=0).label("reclaimable"))

    def select(kind, *where):
        return compat.select(sa.literal_column("'%s'" % kind).label("kind"),
                             *columns).where(sa.and_(*where))

    in_scope = _in_scope(null_scope)
    # NOTE: one select per possible start, not an IN or an OR (the docs).
    selects = [select("w", *in_scope, ALLOCATIONS.c.range_first.between(
        sa.bindparam("lo"), sa.bindparam("hi")))] + [
        select("w", *in_scope, ALLOCATIONS.c.range_first
               == sa.bindparam("start%d" % i)) for i in range(starts)]
    if with_owner:
        selects.append(select("o", ALLOCATIONS.c.owner
                              == sa.bindparam("owner")))
    return selects[0] if len(selects) == 1 else sa.union_all(*selects)


def read_window(conn, scope, ip_version, first, last, owner=None, grace=0,
                timeout=0):
    """Return the rows of a scope that overlap ``[first, last]`` (integers).

    :param owner: if given, also tell whether this owner holds a CIDR.
    :param grace: ``release_grace`` (``timeout``: ``reservation_timeout``),
        for the ``reclaimable`` column.
    :returns: ``(rows, held)``: the rows (released ones too, with a
        ``reclaimable`` column) by ``range_first``; whether ``owner``
        holds a CIDR.
    """
    lo = address_key(first)
    params = {"scope": scope, "ip_version": ip_version, "lo": lo,
              "hi": address_key(last), "owner": owner, "grace": grace,
              "timeout": timeout}
    statement = _window_statement(_starts(first, ip_version, params),
                                  owner is not None, scope is None)
    rows, held = [], False
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
    """The statement of :func:`insert_if_free` (None: the scope None)."""
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

    One statement: inserted only if its owner holds no CIDR and, in a
    named scope, no row of the scope (live or released) overlaps it. Call
    it holding the scope's lock.

    :param values: the column values, from :func:`row_values`
        (``created_at`` is the server's time).
    :returns: True if the row was inserted.
    """
    params = {name: values[name] for name in _VALUES}
    starts = None
    if values["scope"] is not None:
        starts = _starts(int(values["range_first"], 16),
                         values["ip_version"], params)
    return conn.execute(_insert_if_free_statement(starts),
                        params).rowcount == 1


def row_values(owner, scope, ip_version, network, confirmed, created_at=None):
    """Return the column values of an allocation of ``network``."""
    return {"owner": owner, "scope": scope, "ip_version": ip_version,
            "cidr": str(network), "range_first": address_key(network.first),
            "range_last": address_key(network.last), "confirmed": confirmed,
            "created_at": created_at}


def reclaim(conn, ids, grace, timeout):
    """Delete the reclaimable rows of ``ids`` (under the scope's lock).

    :returns: how many were deleted (none confirmed since the read).
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

    One of a scope takes the scope's lock, then is marked released at the
    server's time, its range still occupied; one without a scope is
    deleted. :returns: True if ``owner`` held an allocation.
    """
    conn.execute(_LOCK_OWNER_SCOPE, {"owner": owner})
    result = conn.execute(
        sa.update(ALLOCATIONS).where(sa.and_(
            ALLOCATIONS.c.owner == owner, ALLOCATIONS.c.scope.isnot(None)))
        .values(owner=None, released_owner=owner,
                released_at=models.utc_now()))
    return result.rowcount > 0 or delete(conn, owner)
