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

"""The error of a failed call, and a misconfigured database told apart.

A refused password, an unknown database or a missing SQLite directory is
the configuration's fault (InvalidConfig), not an unreachable database.
Which errors a call retries (a lost connection, a locked SQLite file) is
told here too. Imported only when a call fails: a call that succeeds
never classifies nor words an error
(:meth:`murano_cidr.engine.drivers.db.api.Database.translate_errors`).
"""

import os
import time

from oslo_db import exception as db_exc
from oslo_log import log as logging
from sqlalchemy import exc as sa_exc

from murano_cidr.engine.drivers import db as db_package
from murano_cidr.engine.drivers.db import options as db_options
from murano_cidr.engine.drivers.db import sqlite_faults
from murano_cidr.engine.drivers.db import sqlite_writer
from murano_cidr import exceptions
from murano_cidr import messages

#: The retries of a first connection log as the calls that make them.
LOG = logging.getLogger("murano_cidr.engine.drivers.db.api")

#: MySQL/MariaDB server errors that name the configuration's fault.
MYSQL_CODES = {
    1044: "the user may not use this database",
    1045: "the server refused the user name or password",
    1049: "the database does not exist"}

#: PostgreSQL's connection errors carry no SQLSTATE in psycopg2, only the
#: server's text (English unless the server's lc_messages says otherwise).
#: NOTE: upstream (psycopg2, or an oslo.db filter) would need to expose the
#: server's error code of a refused connection for this to go.
POSTGRESQL_TEXTS = {
    "password authentication failed": MYSQL_CODES[1045],
    "role \"": "the user does not exist",
    "does not exist": MYSQL_CODES[1049]}


def _chain(error):
    seen = set()
    while error is not None and id(error) not in seen:
        yield error
        seen.add(id(error))
        error = (getattr(error, "orig", None)
                 or getattr(error, "inner_exception", None)
                 or error.__cause__ or error.__context__)


def reason(error):
    """Say why a connection error is the configuration's fault, or None.

    :param error: an oslo.db, SQLAlchemy or DB-API error.
    :returns: a sentence, or None for any other error.
    """
    for failure in _chain(error):
        if isinstance(failure, db_exc.DBNonExistentDatabase):
            return MYSQL_CODES[1049]
        args = getattr(failure, "args", ())
        module = type(failure).__module__ or ""
        if module.startswith("pymysql") and args and args[0] in MYSQL_CODES:
            return MYSQL_CODES[args[0]]
        if module.startswith("psycopg2") and args:
            text = str(args[0])
            for fragment, why in POSTGRESQL_TEXTS.items():
                if fragment in text and (fragment != "does not exist"
                                         or "database \"" in text):
                    return why
    return None


def invalid_url(safe_url, why):
    """Return the error of a ``connection`` URL that cannot work.

    :returns: an :class:`~murano_cidr.exceptions.InvalidConfig`.
    """
    return exceptions.InvalidConfig(
        group=db_options.GROUP, option="connection",
        reason="%s: %s; correct the URL, or create what it names. Nothing "
        "was changed" % (safe_url, why))


def unusable_url(safe_url, error):
    """Return the error of a ``connection`` SQLAlchemy cannot use.

    :param safe_url: the URL, without its password.
    :param error: what parsing it, or finding its dialect, raised.
    :returns: an :class:`~murano_cidr.exceptions.InvalidConfig`.
    """
    return exceptions.InvalidConfig(
        group=db_options.GROUP, option="connection",
        reason="%s is not a usable SQLAlchemy URL: %s"
        % (safe_url, messages.one_line(error)))


def diagnose(url, safe_url, error, state_directory=None):
    """Return the error that names the cause of a database error, or None.

    :param url: the database URL.
    :param safe_url: the URL, without its password.
    :param error: the error using it raised.
    :param state_directory: the directory ``db sync`` creates for the
        default SQLite file, or None.
    :returns: an error of :mod:`~murano_cidr.exceptions`, or None.
    """
    path = sqlite_writer.sqlite_file(url)
    if path is None:
        why = reason(error)
        return None if why is None else invalid_url(safe_url, why)
    fault = sqlite_faults.diagnose(url, safe_url, error)
    if fault is None and not os.path.exists(path):
        fault = missing_sqlite_file(safe_url, path,
                                    state_directory is not None)
    return fault


def missing_sqlite_file(safe_url, path, creatable):
    """Return the error of an SQLite file that :func:`os.path.exists` misses.

    :param safe_url: the URL for the message.
    :param path: the file.
    :param creatable: whether ``db sync`` creates its directory (the
        default database under ``[cidr_allocator] state_path``).
    :returns: a :class:`~murano_cidr.exceptions.DatabasePermissionDenied`
        if a directory above it may not be entered by this user, an
        :class:`~murano_cidr.exceptions.InvalidConfig` if its directory
        does not exist and ``db sync`` would not create it, or None (the
        file is merely not created yet).
    """
    directory = os.path.dirname(os.path.abspath(path))
    parent = directory
    while not os.path.isdir(parent) and os.path.dirname(parent) != parent:
        parent = os.path.dirname(parent)
    if not os.access(parent, os.R_OK | os.X_OK):
        return exceptions.DatabasePermissionDenied(url=safe_url, path=parent)
    if parent != directory and not creatable:
        return invalid_url(safe_url, "the directory %s does not exist"
                           % directory)
    return None


def unsynced_sqlite_file(safe_url, path, creatable):
    """Return the error of an SQLite file ``db sync`` has not made yet.

    :param safe_url: the URL for the message.
    :param path: the file, which does not exist.
    :param creatable: as for :func:`missing_sqlite_file`.
    :returns: what :func:`missing_sqlite_file` returns, or a
        :class:`~murano_cidr.exceptions.DatabaseNotSynced`.
    """
    return missing_sqlite_file(safe_url, path, creatable) or (
        exceptions.DatabaseNotSynced(
            url=safe_url, reason="the SQLite file %s does not exist yet"
            % path))


def translate(database, error):
    """Return our error for a database error a call raised.

    :param database: the :class:`~murano_cidr.engine.drivers.db.api.Database`.
    :param error: an :class:`ImportError` (the database's Python driver is
        missing), an oslo.db or an SQLAlchemy error.
    :returns: an error of :mod:`~murano_cidr.exceptions`.
    """
    if isinstance(error, ImportError):
        return exceptions.InvalidConfig(
            group=db_options.GROUP, option="connection",
            reason="the Python driver for %s is not installed (%s); "
            "install %s" % (database.safe_url, error, " or ".join(
                "murano-cidr[%s]" % extra for extra in db_package.EXTRAS)))
    if isinstance(error, db_exc.DBNonExistentTable):
        return exceptions.DatabaseNotSynced(
            url=database.safe_url, reason="table %s is missing" % error.table)
    if isinstance(error, (db_exc.DBDeadlock, db_exc.DBDuplicateEntry)):
        # NOTE: either bound may end the retries first; on a slow link the
        # first attempt can use up call_timeout before any retry.
        why = ("still conflicting with concurrent allocators when the call "
               "ran out of retries or time ([%s] db_max_retries = %d, "
               "call_timeout = %d s)" % (db_options.GROUP,
                                         database.max_retries,
                                         database.call_timeout))
    elif isinstance(error, db_exc.DBNonExistentDatabase):
        why = "the database does not exist"
    elif connection_failed(error):
        why = "cannot connect"
    elif sqlite_busy(error):
        return unavailable(database, error, "another process kept the "
                           "SQLite file locked past call_timeout")
    else:
        why = type(error).__name__
        return unavailable(database, error, "%s: %s"
                           % (why, messages.one_line(error)))
    return unavailable(database, error, "%s (%s)"
                       % (why, messages.one_line(error)))


def unavailable(database, error, reason):
    """Return the error of a database a call could not use.

    An SQLite file that cannot be written (a read-only or full file
    system) or a URL that names the wrong thing gets the error that names
    the cause (:func:`diagnose`); anything else a
    :class:`~murano_cidr.exceptions.DatabaseUnavailable`.

    :param database: the :class:`~murano_cidr.engine.drivers.db.api.Database`.
    :param error: the error the call raised.
    :param reason: why it is unavailable, for the message.
    :returns: an error of :mod:`~murano_cidr.exceptions`.
    """
    fault = diagnose(database.url, database.safe_url, error,
                     database._directory)
    if fault is not None:
        return fault
    return exceptions.DatabaseUnavailable(url=database.safe_url,
                                          reason=reason)


def retriable(error, connected, deadline):
    """Tell whether a call's failed attempt is tried again.

    A lost race, a deadlock, a locked SQLite file or a connection lost
    after it was made is, before ``deadline``
    (:meth:`murano_cidr.engine.drivers.db.api.Database._retry`).

    :param error: the attempt's error.
    :param connected: whether the attempt held a connection.
    :param deadline: a :func:`time.monotonic` time.
    """
    if time.monotonic() >= deadline:
        return False
    if connection_failed(error):
        return connected
    # NOTE: a duplicate owner, candidate or scope row means another
    # allocator won a race; the next attempt sees its row.
    return (isinstance(error, (db_exc.DBDeadlock, db_exc.DBDuplicateEntry))
            or sqlite_busy(error))


def connect_again(database, error, failures, attempts, deadline):
    """Tell whether a failed first connection is tried again; log it.

    (:meth:`murano_cidr.engine.drivers.db.api.Database.wait_for_connection`.)

    :param database: the :class:`~murano_cidr.engine.drivers.db.api.Database`.
    :param error: the attempt's error.
    :param failures: the failed attempts so far; ``error`` is added to
        it if it is a connection that failed for a reason other than the
        configuration.
    :param attempts: how many attempts are allowed.
    :param deadline: a :func:`time.monotonic` time no attempt starts after.
    """
    if not connection_failed(error) or reason(error):
        return False
    failures.append(error)
    again = (len(failures) < attempts
             and time.monotonic() + database.connect_interval < deadline)
    if again:
        # The last failure is the error the call raises.
        LOG.warning("Cannot connect to the allocation database %s "
                    "(attempt %d of at most %d), trying again in "
                    "%d s: %s", database.safe_url, len(failures),
                    attempts, database.connect_interval,
                    messages.one_line(error.__cause__ or error))
    return again


def not_connected(database, error, failures):
    """Return the error of a first connection that failed ``failures`` times.

    :param database: the :class:`~murano_cidr.engine.drivers.db.api.Database`.
    :param error: the last attempt's error.
    :param failures: how many attempts failed to connect.
    :returns: an error of :mod:`~murano_cidr.exceptions` (see
        :func:`unavailable`).
    """
    return unavailable(
        database, error, "cannot connect, %d attempts %d s apart within "
        "%d s ([%s] max_retries, retry_interval, call_timeout) (%s)"
        % (failures, database.connect_interval, database.call_timeout,
           db_options.GROUP, messages.one_line(error)))


def connection_failed(error):
    """Tell whether an error means no usable connection.

    oslo.db says so (``DBConnectionError``) except for libpq 14's
    "connection to server at ... failed". psycopg's ``OperationalError``
    without an SQLSTATE means the connection could not be made or was
    lost (an error of the server's SQL has one). Classified here, for
    this driver's calls only, not in oslo.db's process-wide filters.

    :param error: an exception (oslo.db's, SQLAlchemy's or another).
    :returns: True for a connection that could not be made or was lost.
    """
    if isinstance(error, db_exc.DBConnectionError):
        return True
    if isinstance(error, db_exc.DBError):
        error = error.inner_exception
    inner = getattr(error, "orig", None)  # SQLAlchemy's, wrapped or not
    kind = type(inner)
    return (kind.__name__ == "OperationalError"
            and kind.__module__.split(".")[0] in ("psycopg2", "psycopg")
            and getattr(inner, "pgcode", None) is None
            and getattr(inner, "sqlstate", None) is None)


def sqlite_busy(error):
    """Tell whether ``error`` is SQLite's "database is locked".

    Another process held the file past SQLite's busy timeout, or SQLite
    gave up at once: a call tries again until its deadline
    (:meth:`murano_cidr.engine.drivers.db.api.Database._retry`).

    :param error: an exception.
    """
    return (isinstance(error, sa_exc.OperationalError)
            and "database is locked" in str(error))
