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

"""``import_allocations`` of the ``db`` driver: existing CIDRs, recorded.

A batch is recorded in one transaction, :data:`BATCH` allocations at a
time: each is checked as a whole (an owner once, no two CIDRs of a scope
overlapping, by :func:`murano_cidr.operator.overlaps.scope_overlaps`, the check
``murano-cidr import`` applies to its file too), then against the table,
which holds the ones before it, under the locks of every scope it touches.
Nothing is recorded if anything conflicts with a live allocation, and
memory holds one part of a batch of any size
(:func:`import_stream`).
"""

import itertools

import datetime

import netaddr
from oslo_db import exception as db_exc
import sqlalchemy as sa

from murano_cidr.engine import allocation as allocation_mod
from murano_cidr.engine.drivers.db import allocating
from murano_cidr.engine.drivers.db import compat
from murano_cidr.engine.drivers.db import models
from murano_cidr.engine import taken as taken_mod
from murano_cidr import exceptions
from murano_cidr import messages
from murano_cidr.operator import errors
from murano_cidr.operator import overlaps


#: New rows from which an import on PostgreSQL refreshes the table's
#: statistics: autovacuum's own threshold.
ANALYZE_AFTER = 50
#: Allocations checked and inserted at once.
BATCH = 5000

#: Owners looked up per statement.
CHUNK = 500


def import_allocations(database, allocations):
    """Record allocations that already exist, all or nothing.

    :param database: the driver's
        :class:`~murano_cidr.engine.drivers.db.api.Database`.
    :param allocations: an iterable of
        :class:`~murano_cidr.engine.allocation.Allocation`.
    :returns: the list of :class:`~murano_cidr.engine.allocation.Allocation`
        newly recorded.
    :raises murano_cidr.exceptions.InvalidArgument: for a bad allocation.
    :raises murano_cidr.operator.errors.AllocationConflict: if one overlaps a
        live allocation of its scope, or another of the batch.
    :raises murano_cidr.exceptions.OwnerConflict: if an owner already
        holds another CIDR.
    """
    allocations = list(allocations)
    recorded = database.write(_record_all, lambda: allocations, True)
    return [models.to_allocation(_Row(values)) for values in recorded]


def import_stream(database, source):
    """Record what ``source()`` yields, all or nothing, in one transaction.

    :param database: the driver's
        :class:`~murano_cidr.engine.drivers.db.api.Database`.
    :param source: a callable returning an iterable of
        :class:`~murano_cidr.engine.allocation.Allocation`, called again if the
        transaction is retried.
    :returns: the number of allocations newly recorded.
    :raises: as :func:`import_allocations`.
    """
    return database.write(_record_all, source, False)


def _record_all(conn, source, keep):
    allocations = iter(source())
    recorded, total = [], 0
    while True:
        items = _checked(itertools.islice(allocations, BATCH))
        if not items:
            break
        new = _record(conn, items)
        total += len(new)
        if keep:
            recorded.extend(new)
    if total >= ANALYZE_AFTER and conn.dialect.name == "postgresql":
        # NOTE: PostgreSQL plans the checked insert's lookups from the
        # table's statistics. Until autovacuum analyzes a table that an
        # import just filled (a minute or more), it may filter a whole
        # scope's rows once per lookup, by the (scope, released_at) index,
        # instead of using the unique key: 8 times the cost of an INSERT at
        # 3,686 rows (doc/source/benchmarks.rst). Allowed in a
        # transaction; a user that may not analyze the table gets a
        # warning, not an error.
        conn.execute(sa.text("ANALYZE " + models.ALLOCATIONS.name))
    return recorded if keep else total


def _checked(allocations):
    """Return one part's column values: each owner once, no overlap."""
    items = [_item(a) for a in allocations]
    unique = {}
    for item in items:
        other = unique.setdefault(item["owner"], item)
        if other is not item and _key(other) != _key(item):
            raise exceptions.OwnerConflict(
                owner=item["owner"], cidr=other["cidr"],
                scope=_scope_text(other["scope"]))
    items = list(unique.values())
    for item, other in overlaps.scope_overlaps(items, _extent):
        raise errors.AllocationConflict(
            cidr=item["cidr"], owner=item["owner"], scope=item["scope"],
            other_cidr=other["cidr"], other_owner=other["owner"])
    return items


def _item(allocation):
    for attribute in ("owner", "cidr", "scope", "ip_version"):
        if not hasattr(allocation, attribute):
            raise exceptions.InvalidArgument(
                name="allocation", value=allocation,
                reason="expected an Allocation, without %s" % attribute)
    owner = allocation_mod.validate_owner(allocation.owner)
    scope = allocation_mod.validate_scope(allocation.scope)
    ip_version = allocation_mod.validate_ip_version(allocation.ip_version)
    network = taken_mod.parse_cidr(allocation.cidr, "cidr")
    if network.version != ip_version:
        raise exceptions.InvalidArgument(
            name="cidr", value=allocation.cidr,
            reason="is not an IPv%d network" % ip_version)
    network = network.cidr
    # NOTE: the importing host's clock, for a time the batch did not give:
    # an import is confirmed unless it says otherwise, and only an
    # unconfirmed row's age is compared (reservation_timeout).
    created_at = _naive_utc(getattr(allocation, "created_at", None) or
                            datetime.datetime.now(datetime.timezone.utc))
    return allocating.row_values(
        owner, scope, ip_version, network,
        bool(getattr(allocation, "confirmed", True)), created_at)


def _record(conn, items):
    # The scopes' locks first, in a fixed order: they guard everything
    # read after them.
    for scope in sorted({item["scope"] for item in items
                         if item["scope"] is not None}):
        allocating.lock_scope(conn, scope)
    existing = _get_many(conn, [item["owner"] for item in items])
    new = []
    for item in items:
        row = existing.get(item["owner"])
        if row is None:
            new.append(item)
        elif (row.cidr, row.scope, row.ip_version) != _key(item):
            raise exceptions.OwnerConflict(
                owner=item["owner"], cidr=row.cidr,
                scope=_scope_text(row.scope))
    for item in new:
        if item["scope"] is None:
            continue
        network = netaddr.IPNetwork(item["cidr"])
        for row in allocating.read_window(conn, item["scope"],
                                          item["ip_version"], network.first,
                                          network.last)[0]:
            raise errors.AllocationConflict(
                cidr=item["cidr"], owner=item["owner"],
                scope=item["scope"], other_cidr=row.cidr,
                other_owner=row.owner or "(released, its subnet may "
                "still be on the router)")
    try:
        insert(conn, new)
    except (db_exc.DBDataError, db_exc.DBInvalidUnicodeParameter) as e:
        raise exceptions.InvalidArgument(
            name="allocations", value="(%d new)" % len(new),
            reason="the database cannot store an owner or scope (%s)"
            % messages.one_line(e))
    return new


def insert(conn, allocations):
    """Insert allocations (checked by :func:`_record` first).

    :param allocations: dictionaries with every column but ``id``.
    """
    if allocations:
        conn.execute(sa.insert(models.ALLOCATIONS), allocations)


def _get_many(conn, owners):
    """Return the rows of several owners, as a dictionary by owner."""
    result = {}
    owners = sorted(set(owners))
    for i in range(0, len(owners), CHUNK):
        for row in conn.execute(compat.select(*models.COLUMNS).where(
                models.ALLOCATIONS.c.owner.in_(owners[i:i + CHUNK]))):
            result[row.owner] = row
    return result


class _Row(object):
    """Attribute access to a dictionary of column values."""

    def __init__(self, values):
        self.__dict__.update(values)


def _key(values):
    return (values["cidr"], values["scope"], values["ip_version"])


def _scope_text(scope):
    return scope if scope is not None else "(none)"


def _naive_utc(moment):
    if moment.tzinfo is not None:
        moment = moment.astimezone(datetime.timezone.utc).replace(
            tzinfo=None)
    return moment.replace(microsecond=0)


def _extent(item):
    if item["scope"] is None:
        return None
    return (item["scope"], item["ip_version"], int(item["range_first"], 16),
            int(item["range_last"], 16))
