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

"""The default connection parameters that bound the ``db`` driver's waits.

Loaded for a database on a server only; what each bounds, the formula of
a whole call and the measured figures: ``doc/source/admin/timeouts.rst``.
"""

import sqlalchemy as sa

from murano_cidr.engine.drivers.db import compat
from murano_cidr import exceptions

#: libpq: seconds per connection attempt.
PG_CONNECT_TIMEOUT = 5
#: libpq: milliseconds sent data may stay unacknowledged before the
#: connection is dropped (a dead link is noticed within this).
PG_TCP_USER_TIMEOUT = 10000
#: The first libpq that knows tcp_user_timeout (12); an older one refuses
#: to connect with it, so it is not given one.
LIBPQ_TCP_USER_TIMEOUT = 120000
#: Server side: milliseconds a statement may run or wait for a lock.
PG_STATEMENT_TIMEOUT = 20000
#: Client side (murano-cidr's, :mod:`.watchdog`): seconds one wait for the
#: server may last; above statement_timeout (its answer comes first).
PG_READ_TIMEOUT = 25
#: Server side: milliseconds a transaction may wait for its client before
#: the server ends it and frees its locks (a client cut off mid-call).
PG_IDLE_IN_TRANSACTION_TIMEOUT = 15000

_POSTGRESQL = {
    "connect_timeout": str(PG_CONNECT_TIMEOUT),
    "keepalives": "1",
    "keepalives_idle": "5",
    "keepalives_interval": "2",
    "keepalives_count": "3",
    "tcp_user_timeout": str(PG_TCP_USER_TIMEOUT),
    "read_timeout": str(PG_READ_TIMEOUT),
    "options": "-c statement_timeout=%d "
               "-c idle_in_transaction_session_timeout=%d"
               % (PG_STATEMENT_TIMEOUT, PG_IDLE_IN_TRANSACTION_TIMEOUT),
}

#: Default connection parameters per (backend, Python driver). Drivers not
#: named here get none (their parameters have other names); MySQL's are
#: :data:`murano_cidr.engine.drivers.db.mysql_sessions.DEFAULTS`.
DEFAULTS = {
    ("postgresql", "psycopg2"): _POSTGRESQL,
    ("postgresql", "psycopg"): _POSTGRESQL,
}

#: Parameters whose value must be a whole number of seconds (or
#: milliseconds, or a 0/1 switch).
INTEGERS = frozenset(("connect_timeout", "read_timeout", "write_timeout",
                      "keepalives", "keepalives_idle", "keepalives_interval",
                      "keepalives_count", "tcp_user_timeout"))


def defaults(url):
    """Return the default connection parameters of a parsed URL.

    :param url: a :class:`sqlalchemy.engine.URL`.
    :returns: a new dict (empty for SQLite and unknown drivers).
    """
    if url.get_backend_name() == "mysql":
        return _mysql().defaults(url)
    found = dict(DEFAULTS.get((url.get_backend_name(),
                               url.get_driver_name()), {}))
    if found and libpq_version(url.get_driver_name()) < LIBPQ_TCP_USER_TIMEOUT:
        del found["tcp_user_timeout"]
    return found


def libpq_version(driver):
    """Return the libpq version under ``psycopg2`` or ``psycopg`` (0: none)."""
    try:
        if driver == "psycopg2":
            from psycopg2 import extensions
            return extensions.libpq_version()
        from psycopg import pq
        return pq.version()
    except ImportError:  # not installed: connecting will say so
        return 0


def _mysql():
    from murano_cidr.engine.drivers.db import mysql_sessions  # MySQL's alone
    return mysql_sessions


def merged_url(url, parameters, group):
    """Return the URL to connect to: defaults, then the operator's choices.

    The URL's own query and then ``parameters`` override
    :func:`defaults` key by key; nothing is given twice (a key given twice
    reaches the Python driver as a tuple). PostgreSQL's ``read_timeout``
    is murano-cidr's own (:mod:`.watchdog`'s), not libpq's: it is split
    off the URL.

    :param url: the configured URL (a string).
    :param parameters: ``connection_parameters``, parsed
        (:func:`murano_cidr.engine.drivers.db.parameters.parsed`).
    :param group: the option group, for messages.
    :returns: ``(url, seconds)``: the URL as a string, password included,
        and PostgreSQL's ``read_timeout`` (None for another database).
    :raises murano_cidr.exceptions.InvalidConfig: for a parameter with a
        bad value.
    """
    parsed = sa.engine.url.make_url(url)
    query = defaults(parsed)
    query.update(parsed.query)
    query.update(parameters)
    for name in INTEGERS.intersection(query):
        value = query[name]
        if not (isinstance(value, str) and value.isdigit()):
            raise exceptions.InvalidConfig(
                group=group, option="connection_parameters",
                reason="%s=%s is not a whole number" % (name, value))
    if parsed.get_backend_name() == "mysql":
        _mysql().check_charset(parsed, query.get("charset"), group)
    seconds = None
    if parsed.get_backend_name() == "postgresql" and "read_timeout" in query:
        seconds = int(query.pop("read_timeout"))
    return compat.url_string(parsed, query=query), seconds
