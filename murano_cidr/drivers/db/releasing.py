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

"""How the ``db`` driver releases a CIDR: held back until its subnet is gone.

Murano releases a network before Heat deletes its subnet, and a network
removed from a live environment keeps its subnet and router interface for
the life of the environment. So a released allocation of a scope is not
deleted: its row stays, its range still occupied (every search reads it as
it reads a live one), marked released (``released_at``), its owner moved
to ``released_owner`` so the owner may allocate again.

A released row is *freed* (deleted) only when both hold:

* its subnet was seen off the router: an allocation in its scope, holding
  the scope's row lock, read ``taken`` and found nothing overlapping it,
  or ``murano-cidr reconcile`` found the router's complete listing without
  it (:func:`free`);
* ``[cidr_allocator] release_grace`` seconds passed since the release
  (its ``released_at`` is before the allocation's start less the grace
  period; both whole seconds, so a release in the second the allocation
  started is not freed by it).

An allocation's search counts released rows as used, as live ones; when
it reads the scope's rows in full (the first allocation of a process in
the scope, and before it calls the pool exhausted: see
:mod:`murano_cidr.drivers.db.search`) it deletes those that meet both
conditions (:func:`freeable`, :func:`free_rows`). So a released row stays
listed (``murano-cidr list``, ``usage``) until such a read or
``reconcile`` frees it, and an allocation costs no statement more than
before.

So a subnet still on the router keeps its CIDR out of the pool while it is
there (as far as the allocating engine can see it), and a subnet that the
engine cannot see (another project's, on a shared router) for at least the
grace period. Allocations without a scope are never checked against each
other, so holding their CIDR would protect nothing: they are deleted at
once.

Every function takes an open connection inside a transaction, as
:mod:`murano_cidr.drivers.db.queries` does.
"""

import datetime

from oslo_log import log as logging
import sqlalchemy as sa

from murano_cidr import allocation
from murano_cidr.drivers.db import queries

LOG = logging.getLogger(__name__)

ALLOCATIONS = queries.ALLOCATIONS

_HELD = ALLOCATIONS.c.released_at.isnot(None)

_HELD_COLUMNS = (ALLOCATIONS.c.id, ALLOCATIONS.c.released_owner,
                 ALLOCATIONS.c.scope, ALLOCATIONS.c.ip_version,
                 ALLOCATIONS.c.cidr, ALLOCATIONS.c.range_first,
                 ALLOCATIONS.c.range_last, ALLOCATIONS.c.confirmed,
                 ALLOCATIONS.c.created_at, ALLOCATIONS.c.released_at)


def _utc(moment):
    if moment is not None and moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment


def _naive(moment):
    if moment.tzinfo is not None:
        moment = moment.astimezone(datetime.timezone.utc).replace(
            tzinfo=None)
    return moment


def release(conn, owner, now=None):
    """Release the allocation of ``owner``: hold it back, or delete it.

    An allocation of a scope is marked released (its range stays
    occupied), in one statement; one without a scope is deleted.

    :returns: True if ``owner`` held an allocation.
    """
    result = conn.execute(
        sa.update(ALLOCATIONS).where(ALLOCATIONS.c.owner == owner,
                                     ALLOCATIONS.c.scope.isnot(None))
        .values(owner=None, released_owner=owner,
                released_at=now or queries.utcnow()))
    if result.rowcount > 0:
        return True
    return queries.delete(conn, owner)


def freeable(rows, cutoff, taken_set):
    """Tell which rows of a search window are released and may be freed.

    :param rows: rows of
        :func:`~murano_cidr.drivers.db.queries.read_window`.
    :param cutoff: rows released before this (naive UTC, whole seconds)
        time are past the grace period. Strictly before: a release within
        the second the allocation started may have come after its read of
        ``taken``, so with a grace period of 0 that read must not free it.
    :param taken_set: a :class:`~murano_cidr.taken.TakenSet` of the
        scope's router, as the allocating engine read it with the scope's
        row lock held.
    :returns: a dictionary from ``range_first`` to row: the released rows
        past the grace period that overlap nothing in ``taken_set``.
    """
    return {row.range_first: row for row in rows
            if row.released_at is not None and row.released_at < cutoff
            and not taken_set.overlaps(int(row.range_first, 16),
                                       int(row.range_last, 16))}


def free_rows(conn, scope, ip_version, freeable_rows):
    """Delete the released rows :func:`freeable` found.

    Call it with the scope's row lock held.

    :param freeable_rows: what :func:`freeable` returned.
    :returns: how many rows were deleted.
    """
    result = conn.execute(sa.delete(ALLOCATIONS).where(
        ALLOCATIONS.c.scope == scope,
        ALLOCATIONS.c.ip_version == ip_version,
        ALLOCATIONS.c.range_first.in_(sorted(freeable_rows)), _HELD))
    LOG.info("Freed %d released CIDRs of scope %s, off its router and past "
             "the grace period", result.rowcount, scope)
    return result.rowcount


def to_allocation(row):
    """Turn a released row into an :class:`~murano_cidr.allocation.Allocation`.

    Its ``owner`` is the former owner, ``released_at`` when it was
    released.
    """
    return allocation.Allocation(
        owner=row.released_owner, cidr=row.cidr, scope=row.scope,
        ip_version=row.ip_version, confirmed=bool(row.confirmed),
        created_at=_utc(row.created_at), released_at=_utc(row.released_at))


def list_released(conn, scope=None):
    """Return the released rows still held, of one scope or all."""
    stmt = sa.select(*_HELD_COLUMNS).where(_HELD)
    if scope is not None:
        stmt = stmt.where(ALLOCATIONS.c.scope == scope)
    return conn.execute(stmt).fetchall()


def count_released(conn, scope, ip_version):
    """Return how many released rows a scope holds in one IP version."""
    return conn.execute(
        sa.select(sa.func.count()).select_from(ALLOCATIONS).where(
            ALLOCATIONS.c.scope == scope,
            ALLOCATIONS.c.ip_version == ip_version, _HELD)).scalar()


def free(conn, held):
    """Free one released row, as listed before; True if it was still there.

    :param held: an :class:`~murano_cidr.allocation.Allocation` from
        :func:`to_allocation`; a row released again since (another
        ``released_at``) is left alone.
    """
    if held.scope is None or held.released_at is None:
        return False
    result = conn.execute(sa.delete(ALLOCATIONS).where(
        ALLOCATIONS.c.scope == held.scope,
        ALLOCATIONS.c.ip_version == held.ip_version,
        ALLOCATIONS.c.cidr == held.cidr,
        ALLOCATIONS.c.released_at == _naive(held.released_at), _HELD))
    return result.rowcount > 0
