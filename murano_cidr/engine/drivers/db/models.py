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

"""The tables of the ``db`` driver (``murano_cidr_*``).

Names, collation, clock and the stored form of addresses:
``doc/source/contributor/drivers.rst``.
"""

import datetime

from alembic import migration as alembic_migration
import sqlalchemy as sa
from sqlalchemy.ext import compiler
from sqlalchemy.sql import expression

from murano_cidr.engine import allocation
from murano_cidr.engine.drivers.db import compat

#: The width of an owner or scope column; see
#: :data:`murano_cidr.engine.allocation.MAX_ID_LENGTH`.
ID_LENGTH = 255

#: The width of an address column: 128 bits in hexadecimal.
ADDRESS_LENGTH = 32

_TABLE_ARGS = {
    "mysql_engine": "InnoDB",
    "mysql_charset": "utf8mb4",
    "mysql_collate": "utf8mb4_bin",
}

BASE = compat.declarative_base()

#: The alembic version table of murano-cidr, apart from any other
#: service's ``alembic_version``.
VERSION_TABLE = "murano_cidr_alembic_version"

#: The alembic revision of these tables: the head of the driver's
#: migrations (a unit test holds the two equal).
REVISION = "ecc38100bbdd"


def address_key(address):
    """Return the stored, sortable form of an address.

    :param address: an integer (``netaddr.IPNetwork.first`` or ``.last``).
    :returns: a 32-digit lower-case hexadecimal string.
    """
    return "%032x" % address


class Scope(BASE):
    """One row per scope that ever had an allocation.

    Every allocation in the scope updates the row before it reads anything:
    the row lock queues the allocations of one scope behind each other (and
    makes them conflict at commit on Galera). ``generation`` counts them.
    Allocations without a scope have no row here, because nothing about them
    must be checked.
    """

    __tablename__ = "murano_cidr_scopes"
    __table_args__ = _TABLE_ARGS

    scope = sa.Column(sa.String(ID_LENGTH), primary_key=True)
    generation = sa.Column(sa.BigInteger, nullable=False)


class Allocation(BASE):
    """A CIDR held by an owner, or released and still held back.

    ``owner`` is unique: an owner holds one CIDR. ``(scope, ip_version,
    range_first)`` is unique, so two allocators that picked the same
    candidate conflict in the database itself; overlaps between different
    prefix lengths are excluded by the scope's row lock.

    A released allocation of a scope stays, its range still occupied:
    ``released_at`` says when, ``owner`` is NULL (so the owner may allocate
    again: every backend lets a unique column hold many NULLs) and
    ``released_owner`` keeps who it was. It is deleted once its CIDR is
    absent from an allocation's read of ``taken`` in its scope and
    ``[cidr_allocator] release_grace`` has passed, or by ``reconcile``
    (see :mod:`murano_cidr.engine.drivers.db.allocating`).
    """

    __tablename__ = "murano_cidr_allocations"
    __table_args__ = (
        sa.UniqueConstraint("owner", name="uniq_murano_cidr_alloc0owner"),
        sa.UniqueConstraint("scope", "ip_version", "range_first",
                            name="uniq_murano_cidr_alloc0scope0first"),
        sa.Index("murano_cidr_alloc_released", "scope", "released_at"),
        _TABLE_ARGS,
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    owner = sa.Column(sa.String(ID_LENGTH), nullable=True)
    scope = sa.Column(sa.String(ID_LENGTH), nullable=True)
    ip_version = sa.Column(sa.SmallInteger, nullable=False)
    cidr = sa.Column(sa.String(64), nullable=False)
    range_first = sa.Column(sa.String(ADDRESS_LENGTH), nullable=False)
    range_last = sa.Column(sa.String(ADDRESS_LENGTH), nullable=False)
    confirmed = sa.Column(sa.Boolean, nullable=False)
    created_at = sa.Column(sa.DateTime, nullable=False)
    released_at = sa.Column(sa.DateTime, nullable=True)
    released_owner = sa.Column(sa.String(ID_LENGTH), nullable=True)


class utc_now(expression.FunctionElement):
    """The database server's time, naive UTC, whole seconds, less N seconds.

    ``utc_now()`` is now; ``utc_now(seconds)`` that many seconds earlier
    (an integer or a bound parameter).
    """

    type = sa.DateTime()
    inherit_cache = True
    name = "utc_now"


def _seconds(element, compiler_, **kw):
    clauses = list(element.clauses)
    return compiler_.process(clauses[0], **kw) if clauses else None


@compiler.compiles(utc_now, "sqlite")
def _utc_now_sqlite(element, compiler_, **kw):
    # NOTE: the text SQLAlchemy writes for a DateTime, so that rows written
    # by either compare as strings.
    seconds = _seconds(element, compiler_, **kw)
    shift = "" if seconds is None else ", '-' || (%s) || ' seconds'" % seconds
    return "strftime('%%Y-%%m-%%d %%H:%%M:%%S.000000', 'now'%s)" % shift


@compiler.compiles(utc_now, "mysql")
def _utc_now_mysql(element, compiler_, **kw):
    seconds = _seconds(element, compiler_, **kw)
    if seconds is None:
        return "UTC_TIMESTAMP()"
    return "(UTC_TIMESTAMP() - INTERVAL (%s) SECOND)" % seconds


@compiler.compiles(utc_now, "postgresql")
def _utc_now_postgresql(element, compiler_, **kw):
    # NOTE: the statement's time, not now(), the transaction's start: a
    # release that waited for the scope's lock records when it happened.
    now = "date_trunc('second', statement_timestamp() AT TIME ZONE 'UTC')"
    seconds = _seconds(element, compiler_, **kw)
    if seconds is None:
        return now
    return "(%s - (%s) * interval '1 second')" % (now, seconds)


def _utc(moment):
    if moment is not None and moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment


def to_allocation(row):
    """Turn a row into a :class:`~murano_cidr.engine.allocation.Allocation`.

    A released row (with ``released_at``) gives its former owner.
    """
    released_at = _utc(getattr(row, "released_at", None))
    return allocation.Allocation(
        owner=row.released_owner if released_at else row.owner,
        cidr=row.cidr, scope=row.scope, ip_version=row.ip_version,
        confirmed=bool(row.confirmed), created_at=_utc(row.created_at),
        released_at=released_at)


def revision_of(connection):
    """Return the revision recorded in a database.

    :param connection: an open SQLAlchemy connection.
    :returns: a revision id, or None if the driver's tables were never
        created (no version table, or an empty one).
    """
    context = alembic_migration.MigrationContext.configure(
        connection, opts={"version_table": VERSION_TABLE})
    return context.get_current_revision()
