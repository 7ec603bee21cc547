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

"""The live owners of a Murano cloud, read from Murano's own database.

The engine allocates a CIDR for MuranoPL's ``id($)`` of a
``NeutronNetwork`` object. Those ids live in Murano's database, in the JSON
object model of each environment: the ``description`` column of the
``environment`` table (the deployed model, ``Objects`` and
``ObjectsCopy``) and of the ``session`` table (models being edited or
deployed). Every object there has a ``"?": {"id": ..., "type": ...}``
header. An id found in any of them is live; an environment that Murano
deleted has neither rows nor ids any more.

Nothing is written: the connection is made read-only on the server where
the database can (MySQL/MariaDB, PostgreSQL, SQLite), and only ``SELECT``
statements are sent. A database account with ``SELECT`` on those two
tables is enough.
"""

import contextlib
import json

from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import engines
from oslo_log import log as logging
import sqlalchemy as sa

from murano_cidr.engine.drivers.db import connection as db_connection
from murano_cidr.engine.drivers.db import errors as db_errors
from murano_cidr.engine.drivers.db import sqlite as db_sqlite
from murano_cidr import exceptions
from murano_cidr import messages

LOG = logging.getLogger(__name__)

#: The tables whose ``description`` column holds object models.
TABLES = ("environment", "session")

#: How each backend makes a session read-only for its next transactions.
_READ_ONLY = {
    "mysql": "SET SESSION TRANSACTION READ ONLY",
    "postgresql": "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
    "sqlite": "PRAGMA query_only = ON",
}


def object_ids(model):
    """Return the MuranoPL object ids in a decoded object model.

    :param model: the JSON value of a ``description`` column.
    :returns: a set of id strings: the ``id`` of every ``"?"`` header.
    """
    found = set()
    stack = [model]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            header = value.get("?")
            if isinstance(header, dict) and isinstance(header.get("id"),
                                                       str):
                found.add(header["id"])
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return found


def _unavailable(url, error):
    try:
        dialect = db_connection.dialect(sa.engine.url.make_url(url))
    except (sa.exc.ArgumentError, ValueError, TypeError):
        dialect = db_connection.Dialect()
    why = db_errors.reason(dialect, error)
    if why is not None:  # the URL's fault, not the server's
        return _invalid(url, "%s; correct the URL. Nothing was changed"
                        % why)
    return exceptions.BackendUnavailable(
        backend="Murano's database %s" % url, reason=messages.one_line(error))


def _invalid(url, reason):
    return exceptions.InvalidArgument(name="Murano database", value=url,
                                      reason=reason)


@contextlib.contextmanager
def read_only_connection(url):
    """Connect to a database whose session refuses every write.

    :param url: an SQLAlchemy URL.
    :returns: a context manager giving a
        :class:`sqlalchemy.engine.Connection`.
    :raises murano_cidr.exceptions.InvalidArgument: for a URL that cannot
        be used: unparsable, a missing SQLite file, a refused user or
        password, a database that does not exist.
    :raises murano_cidr.exceptions.BackendUnavailable: if the database
        cannot be reached.
    """
    shown = messages.safe_url(url)
    path = db_sqlite.missing_file(url)
    if path is not None:  # connecting would create it
        raise _invalid(shown, "the SQLite file %s does not exist; nothing "
                       "was read or created" % path)
    try:
        engine = engines.create_engine(url, max_retries=0)
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ImportError,
            ValueError, TypeError) as e:
        raise exceptions.InvalidArgument(
            name="Murano database URL", value=shown,
            reason="is not a usable SQLAlchemy URL: %s" % messages.one_line(e))
    try:
        connection = engine.connect()
    except (db_exc.DBError, sa.exc.SQLAlchemyError) as e:
        engine.dispose()
        raise _unavailable(shown, e)
    try:
        with connection:
            statement = _READ_ONLY.get(engine.dialect.name)
            if statement is not None:
                try:
                    with connection.begin():
                        connection.execute(sa.text(statement))
                except (db_exc.DBError, sa.exc.SQLAlchemyError) as e:
                    raise _unavailable(shown, e)
            with connection.begin() as transaction:
                yield connection
                # NOTE: nothing was written; ending without a commit says so.
                transaction.rollback()
    finally:
        engine.dispose()


def _descriptions(connection, table, shown):
    query = sa.text("SELECT id, description FROM %s"
                    % connection.dialect.identifier_preparer.quote(table))
    try:
        result = connection.execution_options(stream_results=True).execute(
            query)
        for row_id, text in result:
            yield row_id, text
    except db_exc.DBNonExistentTable as e:
        raise exceptions.InvalidArgument(
            name="Murano database", value=shown,
            reason="has no table %s (%s); is it Murano's database?"
            % (table, messages.one_line(e)))
    except (db_exc.DBError, sa.exc.SQLAlchemyError) as e:
        raise _unavailable(shown, e)


def live_owners(url):
    """Read every MuranoPL object id from Murano's database.

    :param url: the SQLAlchemy URL of Murano's database (its ``[database]
        connection``); an account with ``SELECT`` rights is enough.
    :returns: a frozenset of object ids, the owners that are live.
    :raises murano_cidr.exceptions.InvalidArgument: if the URL cannot be
        used, a table is missing, or a model is not JSON (its ids cannot be
        known, so nothing may be pruned).
    :raises murano_cidr.exceptions.BackendUnavailable: if the database
        cannot be reached.
    """
    shown = messages.safe_url(url)
    owners = set()
    counts = {}
    with read_only_connection(url) as connection:
        for table in TABLES:
            counts[table] = 0
            for row_id, text in _descriptions(connection, table, shown):
                counts[table] += 1
                if text is None:
                    continue
                try:
                    model = json.loads(text)
                except (TypeError, ValueError) as e:
                    raise exceptions.InvalidArgument(
                        name="Murano database", value=shown,
                        reason="the description of %s %s is not JSON (%s); "
                        "its object ids cannot be read, so nothing can be "
                        "shown to be gone" % (table, row_id, e))
                owners.update(object_ids(model))
    LOG.debug("Read %d object ids from %d environments and %d sessions "
              "of %s", len(owners), counts["environment"],
              counts["session"], shown)
    return frozenset(owners)
