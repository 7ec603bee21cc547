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

"""Schema migrations of the ``db`` driver, with alembic.

Migrations only go forward (``upgrade``); there is no downgrade, as in
every OpenStack project. The revisions, the version table and the
comparison of a database's revision with this code's are in
:mod:`murano_cidr.operator.drivers.db.revisions`.

Public functions take the configuration, build the database from
``[cidr_allocator_database]`` and close it again; ``*_engine`` variants
take an engine (for tests and tools that hold one).
"""

import warnings

from alembic import command as alembic_command
from oslo_log import log as logging

from murano_cidr.engine.drivers.db import api
from murano_cidr.engine.drivers.db import compat
from murano_cidr.engine.drivers.db import connection as db_connection
from murano_cidr.engine.drivers.db import sqlite as db_sqlite
from murano_cidr import exceptions
from murano_cidr import messages
from murano_cidr.operator.drivers.db import revisions
from murano_cidr.operator.drivers.db import synclock

LOG = logging.getLogger(__name__)


def check_upgradable(connection, url="the database"):
    """Check, before anything is created, that an upgrade can run.

    MySQL and MariaDB commit every ``CREATE TABLE`` at once, so a migration
    that fails half-way leaves tables behind; what would make it fail is
    checked first.

    :param connection: an open SQLAlchemy connection.
    :param url: the database, for the message.
    :raises murano_cidr.operator.errors.UnknownRevision: if the recorded
        revision is not one of this code's.
    :raises murano_cidr.exceptions.ForeignTables: if no revision is
        recorded but tables named ``murano_cidr_*`` exist.
    """
    if revisions.check_known_revision(connection, url) is not None:
        return
    foreign = revisions.tables_of(connection)
    if foreign:
        raise revisions.unrecorded(url, foreign)


def upgrade_engine(engine, revision="head"):
    """Upgrade the driver's tables in the database of an engine.

    :param engine: an SQLAlchemy engine.
    :param revision: the target revision.
    :raises murano_cidr.operator.errors.UnknownRevision: if the database is at
        a revision this code does not know.
    :raises murano_cidr.exceptions.ForeignTables: if tables with the
        driver's names exist without a recorded revision; nothing is
        changed.
    :raises murano_cidr.exceptions.DatabaseUnavailable: if another sync
        of the database held its lock too long (see
        :mod:`~murano_cidr.operator.drivers.db.synclock`).
    """
    url = shown_url(engine)
    with engine.connect() as connection, synclock.transaction(connection,
                                                              url):
        check_upgradable(connection, url)
        with warnings.catch_warnings():
            # NOTE: PyMySQL before 0.10 (Ussuri's 0.9.3) turns each server
            # warning into a Python one, and MariaDB warns that it ignores
            # the name alembic gives its version table's primary key.
            warnings.filterwarnings("ignore", ".*ignored for PRIMARY key")
            alembic_command.upgrade(
                revisions.alembic_configuration(connection), revision)


def shown_url(engine):
    """Return an engine's URL for messages: no password, no query.

    The engine's URL carries the connection parameters this library adds
    (timeouts, keepalives), which are not what the operator configured.
    """
    return messages.safe_url(compat.url_string(engine.url, query={}))


def check_stamp(connection, revision, url="the database"):
    """Refuse a stamp that would leave the tables and the revision apart.

    A stamp records that the driver's tables exist at a revision: ``base``
    over existing tables would hide them (every command then refuses
    tables without a revision), any other revision over no tables would
    record a schema that does not exist (``db sync`` would then do
    nothing and every query fail).

    :param connection: an open SQLAlchemy connection.
    :param revision: the revision to record.
    :param url: the database, for the message.
    :raises murano_cidr.exceptions.InvalidArgument: for either case;
        nothing is changed.
    """
    _check_stamp(revisions.tables_of(connection), revision, url)


def _check_stamp(tables, revision, url):
    if revision == "base" and tables:
        raise exceptions.InvalidArgument(
            name="revision", value=revision,
            reason="%s has the murano-cidr tables %s: stamping base would "
            "leave them without a recorded revision, which every command "
            "then refuses. Nothing was changed. Migrations only go "
            "forward; to remove murano-cidr's schema, drop those tables "
            "and %s" % (url, ", ".join(tables), revisions.VERSION_TABLE))
    if revision != "base" and not tables:
        raise exceptions.DatabaseNotSynced(
            url=url, reason="it has no murano-cidr tables, so there is "
            "nothing to stamp %s: stamping would record a schema that does "
            "not exist; nothing was changed" % revision)


def stamp_engine(engine, revision):
    """Record a revision without running migrations.

    :param engine: an SQLAlchemy engine.
    :param revision: the revision to record (``head`` for the newest).
    :raises murano_cidr.operator.errors.UnknownRevision: if the database is at
        a revision this code does not know.
    :raises murano_cidr.exceptions.InvalidArgument: if the stamp would
        leave the tables and the revision apart (see :func:`check_stamp`).
    """
    with engine.begin() as connection:
        url = shown_url(engine)
        revisions.check_known_revision(connection, url)
        check_stamp(connection, revision, url)
        alembic_command.stamp(revisions.alembic_configuration(connection),
                              revision)


def revision_of_engine(engine):
    """Return the revision of the database of an engine, or None."""
    with engine.connect() as connection:
        return revisions.revision_of(connection)


def schema_of_engine(engine):
    """Return the revision and, without one, the driver's tables.

    :param engine: an SQLAlchemy engine.
    :returns: ``(revision or None, list of table names)``; the list is
        empty when a revision is recorded.
    """
    with engine.connect() as connection:
        current = revisions.revision_of(connection)
        tables = revisions.tables_of(connection) if current is None else []
        return current, tables


def _with_database(conf, func, *args):
    database = api.Database(conf)
    try:
        database.wait_for_connection()
        with database.translate_errors():
            return func(database.engine, *args)
    finally:
        database.close()


def _read_database(conf, func, absent):
    """Run a read; an SQLite file that does not exist is never created.

    :returns: what ``func(engine)`` returns, or ``absent`` when the
        database is an SQLite file that does not exist (yet).
    """
    if db_sqlite.missing_file(db_connection.connection_url(conf)):
        return absent
    return _with_database(conf, func)


def _check_known(revision):
    if revision in ("head", "heads", "base"):
        return
    if revision not in revisions.known_revisions():
        raise exceptions.InvalidArgument(
            name="revision", value=revision,
            reason="unknown; known revisions: %s"
            % ", ".join(sorted(revisions.known_revisions())))


def upgrade(conf, revision="head"):
    """Create or upgrade the driver's tables (``db sync``).

    :param conf: an :class:`oslo_config.cfg.ConfigOpts`.
    :param revision: the target revision.
    :raises murano_cidr.exceptions.InvalidArgument: for an unknown
        revision, or ``base``.
    :raises murano_cidr.operator.errors.UnknownRevision: if the database is at
        a revision this code does not know.
    :raises murano_cidr.exceptions.ForeignTables: if tables with the
        driver's names exist without a recorded revision.
    :raises murano_cidr.exceptions.DatabaseUnavailable: if the database
        cannot be reached or the migration fails.
    """
    _check_known(revision)
    if revision == "base":
        raise exceptions.InvalidArgument(
            name="revision", value=revision,
            reason="db sync only goes forward, and base would mean "
            "removing the tables, which no murano-cidr command does. "
            "Nothing was changed")
    _with_database(conf, upgrade_engine, revision)
    LOG.info("Allocation database upgraded to %s", revision)


def stamp(conf, revision):
    """Record ``revision`` as the schema's without running migrations.

    :param conf: an :class:`oslo_config.cfg.ConfigOpts`.
    :param revision: a known revision, or ``head``.
    :raises murano_cidr.exceptions.InvalidArgument: for an unknown
        revision, or a stamp that :func:`check_stamp` refuses.
    :raises murano_cidr.operator.errors.UnknownRevision: if the database is at
        a revision this code does not know.
    :raises murano_cidr.exceptions.DatabaseUnavailable: if the database
        cannot be reached.
    """
    _check_known(revision)
    url = db_connection.connection_url(conf)
    missing = db_sqlite.missing_file(url)
    if missing and revision != "base":
        # NOTE: connecting would create the file; a stamp of base has
        # nothing to record in it.
        raise exceptions.DatabaseNotSynced(
            url=messages.safe_url(url), reason="the SQLite file %s does not "
            "exist, so there is nothing to stamp %s: stamping records the "
            "revision of tables that exist; nothing was created"
            % (missing, revision))
    if missing:
        return
    _with_database(conf, stamp_engine, revision)


def current_revision(conf):
    """Return the schema revision of the configured database.

    A read: an SQLite file (or its directory) that does not exist is not
    created.

    :param conf: an :class:`oslo_config.cfg.ConfigOpts`.
    :returns: a revision id, or None for a database without the tables.
    :raises murano_cidr.exceptions.DatabaseUnavailable: if the database
        cannot be reached.
    """
    return _read_database(conf, revision_of_engine, None)


def current_schema(conf):
    """Return :func:`schema_of_engine` of the configured database.

    :param conf: an :class:`oslo_config.cfg.ConfigOpts`.
    :raises murano_cidr.exceptions.DatabaseUnavailable: if the database
        cannot be reached.
    """
    return _read_database(conf, schema_of_engine, (None, []))
