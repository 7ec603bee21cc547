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

"""The errors of the allocation database's calls: retried, or ours.

Which failed attempts a call retries, and the error of
:mod:`murano_cidr.exceptions` it raises otherwise: a refused password, an
unknown database or a missing SQLite directory is the configuration's
(InvalidConfig), not an unreachable database (the dialect names the
cause: :class:`.connection.Dialect`).
"""

import time

from oslo_db import exception as db_exc
from oslo_log import log as logging

from murano_cidr.engine.drivers import db as db_package
from murano_cidr.engine.drivers.db import options as db_options
from murano_cidr import exceptions
from murano_cidr import messages

#: The retries of a first connection log as the calls that make them.
LOG = logging.getLogger("murano_cidr.engine.drivers.db.api")


def chain(error):
    """Yield ``error`` and the errors it wraps or was raised from."""
    seen = set()
    while error is not None and id(error) not in seen:
        yield error
        seen.add(id(error))
        error = (getattr(error, "orig", None)
                 or getattr(error, "inner_exception", None)
                 or error.__cause__ or error.__context__)


def reason(dialect, error):
    """Say why a connection error is the configuration's fault, or None."""
    for failure in chain(error):
        if isinstance(failure, db_exc.DBNonExistentDatabase):
            return "the database does not exist"
        why = dialect.refused(failure)
        if why:
            return why
    return None


def invalid_url(safe_url, why):
    """Return the InvalidConfig of a ``connection`` URL that cannot work."""
    return exceptions.InvalidConfig(
        group=db_options.GROUP, option="connection",
        reason="%s: %s; correct the URL, or create what it names. Nothing "
        "was changed" % (safe_url, why))


def unusable_url(safe_url, error):
    """Return the InvalidConfig of a URL SQLAlchemy cannot parse or load."""
    return exceptions.InvalidConfig(
        group=db_options.GROUP, option="connection",
        reason="%s is not a usable SQLAlchemy URL: %s"
        % (safe_url, messages.one_line(error)))


def translate(database, error):
    """Return our error for a database error a call raised.

    :param database: the :class:`~.api.Database`.
    :param error: an :class:`ImportError` (no Python driver), an oslo.db
        or an SQLAlchemy error.
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
        # NOTE: either bound may end the retries first.
        why = ("still conflicting with concurrent allocators when the call "
               "ran out of retries or time ([%s] db_max_retries = %d, "
               "call_timeout = %d s)" % (db_options.GROUP,
                                         database.max_retries,
                                         database.call_timeout))
    elif isinstance(error, db_exc.DBNonExistentDatabase):
        why = "the database does not exist"
    elif connection_failed(database.dialect, error):
        why = "cannot connect"
    elif database.dialect.busy(error):
        return unavailable(database, error, "another process kept the "
                           "SQLite file locked past call_timeout")
    else:
        return unavailable(database, error, "%s: %s" % (
            type(error).__name__, messages.one_line(error)))
    return unavailable(database, error, "%s (%s)"
                       % (why, messages.one_line(error)))


def unavailable(database, error, reason):
    """Return the error of a database a call could not use.

    The error naming the cause (:meth:`.connection.Dialect.diagnose`) if
    there is one, else a :class:`~murano_cidr.exceptions.DatabaseUnavailable`.
    """
    fault = database.dialect.diagnose(database.url, database.safe_url, error,
                                      database._directory is not None)
    if fault is not None:
        return fault
    return exceptions.DatabaseUnavailable(url=database.safe_url,
                                          reason=reason)


def retriable(dialect, error, connected, deadline):
    """Tell whether a call's failed attempt is tried again.

    A lost race, a deadlock, a busy database or a connection lost after it
    was made is, before ``deadline`` (a :func:`time.monotonic` time); our
    own errors never are.

    :param connected: whether the attempt held a connection.
    """
    if (isinstance(error, exceptions.MuranoCidrException)
            or time.monotonic() >= deadline):
        return False
    if connection_failed(dialect, error):
        return connected
    # NOTE: a duplicate owner, candidate or scope row means another
    # allocator won a race; the next attempt sees its row.
    return (isinstance(error, (db_exc.DBDeadlock, db_exc.DBDuplicateEntry))
            or dialect.busy(error))


def connect_again(database, error, failures, attempts, deadline):
    """Tell whether a failed first connection is tried again; log it.

    :param failures: the failed attempts so far; ``error`` is added if
        the connection failed for a reason other than the configuration.
    :param attempts: how many attempts are allowed.
    :param deadline: a :func:`time.monotonic` time no attempt starts after.
    """
    if (not connection_failed(database.dialect, error)
            or reason(database.dialect, error)):
        return False
    failures.append(error)
    again = (len(failures) < attempts
             and time.monotonic() + database.connect_interval < deadline)
    if again:
        LOG.warning("Cannot connect to the allocation database %s "
                    "(attempt %d of at most %d), trying again in "
                    "%d s: %s", database.safe_url, len(failures),
                    attempts, database.connect_interval,
                    messages.one_line(error.__cause__ or error))
    return again


def not_connected(database, error, failures):
    """Return the error of a first connection that failed ``failures``."""
    return unavailable(
        database, error, "cannot connect, %d attempts %d s apart within "
        "%d s ([%s] max_retries, retry_interval, call_timeout) (%s)"
        % (failures, database.connect_interval, database.call_timeout,
           db_options.GROUP, messages.one_line(error)))


def connection_failed(dialect, error):
    """Tell whether an error means no usable connection (made or kept)."""
    if isinstance(error, db_exc.DBConnectionError):
        return True
    if isinstance(error, db_exc.DBError):
        error = error.inner_exception
    return dialect.lost(getattr(error, "orig", None))
