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

"""The tables of the ``db`` driver (``murano_cidr_*``) and its clock.

Names, collation, clock and the stored form of addresses:
``doc/source/reference/db-driver.rst``.
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

#: The alembic revisions this code knows, oldest first; the last is the
#: revision of these tables (a unit test holds them equal to the scripts').
REVISIONS = ("5c1b0e7f2a91", "ecc38100bbdd")
REVISION = REVISIONS[-1]


class Scope(BASE):
    """One row per scope that ever had an allocation: its lock.

    Every allocation in the scope updates the row before it reads anything;
    ``generation`` counts them.
    """

    __tablename__ = "murano_cidr_scopes"
    __table_args__ = _TABLE_ARGS

    scope = sa.Column(sa.String(ID_LENGTH), primary_key=True)
    generation = sa.Column(sa.BigInteger, nullable=False)


class Allocation(BASE):
    """A CIDR held by an owner, or released and still held back.

    ``owner`` is unique; so is ``(scope, ip_version, range_first)``. A
    released row of a scope keeps its range: ``owner`` NULL,
    ``released_owner`` and ``released_at`` set.
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


ALLOCATIONS = Allocation.__table__
SCOPES = Scope.__table__
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
