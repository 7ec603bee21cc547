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

"""What the operator's commands read and change of the ``db`` driver's rows.

Listing, counting, freeing a held-back row (``reconcile``) and deleting a
scope (the tools): the :class:`~murano_cidr.drivers.db.driver.DbDriver`
methods that an engine, which allocates, confirms and releases, never
calls. They run in the driver's transactions, with its retries, on the
SQL of :mod:`murano_cidr.drivers.db.statements`.
"""

import datetime

import sqlalchemy as sa

from murano_cidr.drivers.db import held_back
from murano_cidr.drivers.db import models
from murano_cidr.drivers.db import statements

ALLOCATIONS = statements.ALLOCATIONS


def _select(*columns):
    return sa.select(*statements.COLUMNS, *columns)


def _rows(conn, where, scope, *columns):
    stmt = _select(*columns).where(where)
    if scope is not None:
        stmt = stmt.where(ALLOCATIONS.c.scope == scope)
    return conn.execute(stmt).fetchall()


def live(database, scope=None):
    """Return the live allocations, of one scope or all.

    :returns: a list of :class:`~murano_cidr.allocation.Allocation`, by
        scope (None first), IP version and address.
    """
    rows = database.read(_rows, ALLOCATIONS.c.released_at.is_(None), scope)
    rows = sorted(rows, key=lambda r: (r.scope is not None, r.scope or "",
                                       r.ip_version, r.range_first))
    return [models.to_allocation(r) for r in rows]


def released(database, scope=None):
    """Return the released allocations still held back, of one scope or all.

    :returns: a list of :class:`~murano_cidr.allocation.Allocation`, by
        scope, IP version and address.
    """
    rows = database.read(_rows, statements.HELD, scope,
                         ALLOCATIONS.c.released_owner,
                         ALLOCATIONS.c.released_at)
    rows = sorted(rows, key=lambda r: (r.scope, r.ip_version, r.range_first))
    return [models.to_allocation(r) for r in rows]


def now(database):
    """Return the database server's time, aware UTC, whole seconds."""
    moment = database.read(
        lambda conn: conn.execute(sa.select(models.utc_now())).scalar())
    return moment.replace(tzinfo=datetime.timezone.utc)


def _naive_utc(moment):
    """Return ``moment`` as naive UTC, as the tables keep it."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(datetime.timezone.utc).replace(
            tzinfo=None)
    return moment


def _free(conn, held):
    if held.scope is None or held.released_at is None:
        return False
    return conn.execute(sa.delete(ALLOCATIONS).where(
        ALLOCATIONS.c.scope == held.scope,
        ALLOCATIONS.c.ip_version == held.ip_version,
        ALLOCATIONS.c.cidr == held.cidr,
        ALLOCATIONS.c.released_at == _naive_utc(held.released_at),
        statements.HELD)).rowcount > 0


def free(database, held):
    """Free one released row, as listed before.

    :param held: an :class:`~murano_cidr.allocation.Allocation` from
        :func:`released`; a row released again since (another
        ``released_at``) is left alone.
    :returns: True if it was still there (and is now deleted).
    """
    return database.write(_free, held)


def counts(database, pool, scope, ages):
    """Count what a scope holds of ``pool``, reading only its rows.

    :param ages: ``(release_grace, reservation_timeout)`` in seconds.
    :returns: ``(live, held, released)``: the live rows, a
        :class:`~murano_cidr.taken.TakenSet` of what the scope's rows
        (live and held back) occupy of the pool, and the held-back rows.
    """
    def read(conn):
        back = held_back.hold_back(conn, scope, pool.version, *ages)
        return (back.live, held_back.held_in_pool(conn, pool, scope),
                back.released)

    return database.read(read)


def _delete_scope(conn, scope):
    if scope is not None:
        statements.lock_scope(conn, scope, create=False)
    return conn.execute(sa.delete(ALLOCATIONS).where(
        statements.scope_is(scope))).rowcount


def delete_scope(database, scope):
    """Delete every row of a scope, its lock taken first; the scope stays.

    :returns: how many allocations were deleted.
    """
    return database.write(_delete_scope, scope)
