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

Listing, counting, freeing a held-back row (``reconcile``), deleting a
scope (the tools) and importing: the ``db`` driver's functions of
:mod:`murano_cidr.operator.drivers.records` (its
:attr:`~murano_cidr.engine.drivers.base.AllocatorDriver.records`), which an
engine, which allocates, confirms and releases, never calls. They run in
the driver's transactions, with its retries, on the SQL of
:mod:`murano_cidr.engine.drivers.db.allocating`.
"""

import datetime

from oslo_log import log as logging
import sqlalchemy as sa

from murano_cidr.engine import allocation as allocation_mod
from murano_cidr.engine.drivers.db import allocating
from murano_cidr.engine.drivers.db import compat
from murano_cidr.engine.drivers.db import driver as db_driver
from murano_cidr.engine.drivers.db import models
from murano_cidr.engine import taken as taken_mod
from murano_cidr.operator.drivers.db import bulk_import
from murano_cidr.operator.drivers import records

LOG = logging.getLogger(__name__)

ALLOCATIONS = models.ALLOCATIONS


def _select(*columns):
    return compat.select(*models.COLUMNS, *columns)


def _rows(conn, where, scope, *columns):
    stmt = _select(*columns).where(where)
    if scope is not None:
        stmt = stmt.where(ALLOCATIONS.c.scope == scope)
    return conn.execute(stmt).fetchall()


def live(database, scope=None):
    """Return the live allocations, of one scope or all.

    :returns: a list of :class:`~murano_cidr.engine.allocation.Allocation`, by
        scope (None first), IP version and address.
    """
    rows = database.read(_rows, ALLOCATIONS.c.released_at.is_(None), scope)
    rows = sorted(rows, key=lambda r: (r.scope is not None, r.scope or "",
                                       r.ip_version, r.range_first))
    return [models.to_allocation(r) for r in rows]


#: Rows :func:`live_allocations` reads at once.
PAGE = 10000


def _page(conn, after):
    return conn.execute(
        _select(ALLOCATIONS.c.id)
        .where(sa.and_(ALLOCATIONS.c.released_at.is_(None),
                       ALLOCATIONS.c.id > after))
        .order_by(ALLOCATIONS.c.id).limit(PAGE)).fetchall()


def live_allocations(driver):
    """Yield every live allocation, reading :data:`PAGE` rows at a time.

    See :func:`murano_cidr.operator.drivers.records.live_allocations`. Each
    page is a read of its own: an allocation made or released meanwhile may be
    seen or not, as with any read before a write.

    :returns: an iterator of
        :class:`~murano_cidr.engine.allocation.Allocation`, in the order they
        were made.
    """
    after = 0
    while True:
        rows = driver.database.read(_page, after)
        if not rows:
            return
        after = rows[-1].id
        for row in rows:
            yield models.to_allocation(row)


def list_released(driver, scope=None):
    """Return the released allocations still held back, of one scope or all.

    :returns: a list of :class:`~murano_cidr.engine.allocation.Allocation`, by
        scope, IP version and address.
    """
    scope = allocation_mod.validate_scope(scope)
    rows = driver.database.read(_rows, models.HELD, scope,
                                ALLOCATIONS.c.released_owner,
                                ALLOCATIONS.c.released_at)
    rows = sorted(rows, key=lambda r: (r.scope, r.ip_version, r.range_first))
    return [models.to_allocation(r) for r in rows]


def now(driver):
    """Return the database server's time, aware UTC, whole seconds."""
    moment = driver.database.read(
        lambda conn: conn.execute(compat.select(
            models.utc_now().label("now"))).scalar())
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
    return conn.execute(sa.delete(ALLOCATIONS).where(sa.and_(
        ALLOCATIONS.c.scope == held.scope,
        ALLOCATIONS.c.ip_version == held.ip_version,
        ALLOCATIONS.c.cidr == held.cidr,
        ALLOCATIONS.c.released_at == _naive_utc(held.released_at),
        models.HELD))).rowcount > 0


def free_released(driver, held):
    """Free one released row, as listed before.

    :param held: an :class:`~murano_cidr.engine.allocation.Allocation` from
        :func:`list_released`; a row released again since (another
        ``released_at``) is left alone.
    :returns: True if it was still there (and is now deleted).
    """
    freed = driver.database.write(_free, held)
    if freed:
        LOG.info("Freed the released %s of scope %s (owner %s)",
                 held.cidr, held.scope, held.owner)
    return freed


def usage(driver, scope=None, ip_version=4, taken=()):
    """Count what a scope uses of the pool, reading only its rows.

    See :func:`murano_cidr.operator.drivers.records.usage`.
    """
    scope = allocation_mod.validate_scope(scope)
    pool = driver.pool(ip_version)
    taken_set = taken_mod.TakenSet.from_taken(taken, pool.version)

    def read(conn):
        back = db_driver.hold_back(conn, scope, pool.version, *driver.ages)
        return (back.live, db_driver.held_in_pool(conn, pool, scope),
                back.released)

    live_rows, held, released = driver.database.read(read)
    return records.counted(pool, scope, live_rows, held, taken_set,
                           released=released)


def _delete_scope(conn, scope):
    if scope is not None:
        allocating.lock_scope(conn, scope, create=False)
    return conn.execute(sa.delete(ALLOCATIONS).where(
        models.scope_is(scope))).rowcount


def release_scope(driver, scope):
    """Delete every row of a scope, in one transaction, its lock first.

    The scope's row stays, locked like an allocation's.

    :returns: how many allocations were deleted.
    """
    scope = allocation_mod.validate_scope(scope)
    released = driver.database.write(_delete_scope, scope)
    driver.hints.forget(scope)
    LOG.info("Released %d allocations of scope %s", released, scope)
    return released


def import_allocations(driver, allocations):
    """Record CIDRs that already exist, all or nothing.

    See :func:`murano_cidr.operator.drivers.records.import_allocations` and
    :mod:`murano_cidr.operator.drivers.db.bulk_import`.
    """
    recorded = bulk_import.import_allocations(driver.database, allocations)
    if recorded:
        LOG.info("Imported %d allocations", len(recorded))
    return recorded


def import_stream(driver, source):
    """One transaction, holding a part of ``source()`` at a time."""
    recorded = bulk_import.import_stream(driver.database, source)
    if recorded:
        LOG.info("Imported %d allocations", recorded)
    return recorded
