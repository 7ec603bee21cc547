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

"""The driver's alembic revisions, and how a database's compares with them.

The driver's tables may share a database with another service, so its
alembic version table is its own (:data:`VERSION_TABLE`) and migrations
only ever look at tables named ``murano_cidr_*``. This module reads the
driver's tables on an open connection and compares their revision with
the scripts this code ships (``alembic/``, beside it); it changes
nothing. Running migrations is :mod:`.migration`'s job. An engine never
loads it: its driver checks against
:data:`~murano_cidr.engine.drivers.db.models.REVISIONS`.
"""

import enum

from alembic import config as alembic_config
from alembic import script as alembic_script
from oslo_log import log as logging
import sqlalchemy as sa

from murano_cidr.engine.drivers.db import models
from murano_cidr import exceptions
from murano_cidr.operator import errors

LOG = logging.getLogger(__name__)

VERSION_TABLE = models.VERSION_TABLE
revision_of = models.revision_of

#: The prefix of every table the driver owns.
TABLE_PREFIX = "murano_cidr_"

SCRIPT_LOCATION = "murano_cidr.operator.drivers.db:alembic"


def include_object(obj, name, type_, reflected, compare_to):
    """Tell alembic to look at the driver's own tables only.

    Used by autogenerate and the model/migration comparison, so the tables
    of a service sharing the database are never touched or reported.
    """
    if type_ == "table":
        return name.startswith(TABLE_PREFIX) and name != VERSION_TABLE
    table = getattr(obj, "table", None)
    if table is not None:
        return table.name.startswith(TABLE_PREFIX)
    return True


def alembic_configuration(connection=None):
    """Return the alembic configuration of the driver's migrations.

    :param connection: an open SQLAlchemy connection for ``env.py`` to use.
    :returns: an :class:`alembic.config.Config`.
    """
    config = alembic_config.Config()
    config.set_main_option("script_location", SCRIPT_LOCATION)
    config.attributes["connection"] = connection
    return config


def head_revision():
    """Return the newest revision this code knows.

    :returns: a revision id string.
    """
    script = alembic_script.ScriptDirectory.from_config(
        alembic_configuration())
    return script.get_current_head()


def known_revisions():
    """Return every revision id this code knows."""
    script = alembic_script.ScriptDirectory.from_config(
        alembic_configuration())
    return {rev.revision for rev in script.walk_revisions()}


def tables_of(connection):
    """Return the driver's tables in a database, version table excepted.

    :param connection: an open SQLAlchemy connection.
    :returns: a sorted list of table names starting with
        :data:`TABLE_PREFIX`.
    """
    return sorted(name for name in sa.inspect(connection).get_table_names()
                  if name.startswith(TABLE_PREFIX) and name != VERSION_TABLE)


def unrecorded(url, tables):
    """The error every command gives for tables without a revision.

    :param url: the database, for the message.
    :param tables: the driver's tables found.
    :returns: a :class:`~murano_cidr.exceptions.ForeignTables`.
    """
    return exceptions.ForeignTables(url=url, tables=tables,
                                    version_table=VERSION_TABLE)


class SchemaState(enum.Enum):
    """How a database's schema compares with this code's migrations."""

    #: At the head revision.
    CURRENT = "current"
    #: No murano-cidr tables.
    MISSING = "missing"
    #: Tables named ``murano_cidr_*`` but no revision recorded: every
    #: command refuses them with the same
    #: :class:`~murano_cidr.exceptions.ForeignTables`.
    UNRECORDED = "unrecorded"
    #: At an older revision this code knows: ``db sync`` upgrades it.
    OLDER = "older"
    #: At a revision this code does not know: assumed newer.
    NEWER = "newer"


def schema_state(current, tables=()):
    """Compare a recorded revision with this code's migrations.

    The one comparison behind the driver's start-up check
    (:func:`check_revision`), ``db sync`` and ``murano-cidr-status``.

    :param current: the revision of the database, or None.
    :param tables: the driver's tables in the database (see
        :func:`tables_of`); read only when no revision is recorded.
    :returns: a :class:`SchemaState`.
    """
    if current == head_revision():
        return SchemaState.CURRENT
    if current is None:
        return SchemaState.UNRECORDED if tables else SchemaState.MISSING
    if current in known_revisions():
        return SchemaState.OLDER
    return SchemaState.NEWER


def check_revision(current, url="the database", tables=()):
    """Check that a recorded revision lets this code run.

    A revision this code does not know is assumed to be newer (the schema
    was upgraded before this service was); it is logged and accepted.

    :param current: the revision of the database, or None.
    :param url: the database, for the message.
    :param tables: the driver's tables in the database, when no revision
        is recorded.
    :raises murano_cidr.exceptions.DatabaseNotSynced: if the tables are
        missing or at an older revision.
    :raises murano_cidr.exceptions.ForeignTables: if tables exist without
        a recorded revision.
    """
    state = schema_state(current, tables)
    head = head_revision()
    if state is SchemaState.CURRENT:
        return
    if state is SchemaState.UNRECORDED:
        raise unrecorded(url, tables)
    if state is SchemaState.MISSING:
        raise exceptions.DatabaseNotSynced(
            url=url, reason="the murano-cidr tables do not exist")
    if state is SchemaState.OLDER:
        raise exceptions.DatabaseNotSynced(
            url=url, reason="it is at revision %s, this code needs %s"
            % (current, head))
    LOG.warning("The allocation database %s is at revision %s, unknown to "
                "this code (head %s); assuming a newer, compatible schema",
                url, current, head)


def check_known_revision(connection, url="the database"):
    """Refuse to migrate a database whose revision this code does not know.

    Alembic cannot find a path from a revision it does not know; this says
    so in words an operator can act on, before anything is changed.

    :param connection: an open SQLAlchemy connection.
    :param url: the database, for the message.
    :returns: the recorded revision, or None.
    :raises murano_cidr.operator.errors.UnknownRevision: if the recorded
        revision is not one of this code's.
    """
    current = revision_of(connection)
    if current is not None and current not in known_revisions():
        raise errors.UnknownRevision(url=url, revision=current,
                                     head=head_revision())
    return current
