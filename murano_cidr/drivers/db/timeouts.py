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

"""What bounds each wait of the ``db`` driver on a network.

Every connection to PostgreSQL or MySQL/MariaDB gets default connection
parameters that bound its waits (:data:`DEFAULTS`): how long a connection
attempt may take, how long a dead link goes unnoticed, and, on the server,
how long a statement may wait for a lock and how long a transaction whose
client went silent keeps its locks. The operator's
``[cidr_allocator_database] connection_parameters`` and the URL's own query
win over them, key by key (:func:`parameters`, :func:`merged_url`). The
whole call is bounded by ``call_timeout`` on top (see
:mod:`murano_cidr.drivers.db.api`); ``doc/source/admin/timeouts.rst`` gives
the formulas and measured figures. MySQL sessions read committed data
besides (:func:`read_committed`). Loaded for a database on a server, and
for an SQLite file only to parse the ``connection_parameters`` it is given
(:func:`murano_cidr.drivers.db.connection.connect_url`,
:class:`murano_cidr.drivers.db.api.Database`).
"""

from urllib import parse

import sqlalchemy as sa

from murano_cidr import exceptions

try:
    from pymysql import charset as pymysql_charset
except ImportError:  # the [mysql] extra is not installed
    pymysql_charset = None

#: libpq: seconds per connection attempt.
PG_CONNECT_TIMEOUT = 5
#: libpq: milliseconds sent data may stay unacknowledged before the
#: connection is dropped (a dead link is noticed within this).
PG_TCP_USER_TIMEOUT = 10000
#: Server side: milliseconds a statement may run or wait for a lock.
PG_STATEMENT_TIMEOUT = 20000
#: Client side (murano-cidr's, :mod:`.watchdog`): seconds one wait for the
#: server may last; above statement_timeout (its answer comes first).
PG_READ_TIMEOUT = 25
#: Server side: milliseconds a transaction may wait for its client before
#: the server ends it and frees its locks (a client cut off mid-call).
PG_IDLE_IN_TRANSACTION_TIMEOUT = 15000

#: PyMySQL / mysqlclient: seconds per connection attempt.
MYSQL_CONNECT_TIMEOUT = 5
#: PyMySQL / mysqlclient: seconds one read or write may block.
MYSQL_IO_TIMEOUT = 20
#: Server side: seconds a statement may wait for a row lock: less than the
#: read timeout, so the server answers first, and more than MariaDB's
#: idle-transaction timeout, so that a call queued behind an engine cut
#: off while holding the scope's lock gets it when the server ends that
#: engine's transaction, instead of failing at the same moment.
MYSQL_LOCK_WAIT_TIMEOUT = 18
#: Server side (MariaDB 10.3 and later only): seconds a transaction may
#: wait for its client before the server ends it and frees its locks.
MARIADB_IDLE_TRANSACTION_TIMEOUT = 15

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

_MYSQL = {
    # NOTE: the tables are utf8mb4; oslo.db would otherwise ask for utf8
    # (utf8mb3), which cannot carry every owner or scope.
    "charset": "utf8mb4",
    "connect_timeout": str(MYSQL_CONNECT_TIMEOUT),
    "read_timeout": str(MYSQL_IO_TIMEOUT),
    "write_timeout": str(MYSQL_IO_TIMEOUT),
    # MySQL skips the /*M! ... */ part; MariaDB 10.3+ runs it.
    "init_command": "SET SESSION innodb_lock_wait_timeout = %d "
                    "/*M!100300 , idle_transaction_timeout = %d */"
                    % (MYSQL_LOCK_WAIT_TIMEOUT,
                       MARIADB_IDLE_TRANSACTION_TIMEOUT),
}

#: Default connection parameters per (backend, Python driver). Drivers not
#: named here get none (their parameters have other names).
DEFAULTS = {
    ("postgresql", "psycopg2"): _POSTGRESQL,
    ("postgresql", "psycopg"): _POSTGRESQL,
    ("mysql", "pymysql"): _MYSQL,
    ("mysql", "mysqldb"): _MYSQL,
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
    backend = url.get_backend_name()
    known = DEFAULTS.get((backend, url.get_driver_name()))
    if known is None:
        known = {"charset": _MYSQL["charset"]} if backend == "mysql" else {}
    return dict(known)


def client_wait(url):
    """Split murano-cidr's own ``read_timeout`` off a PostgreSQL URL.

    :param url: what :func:`merged_url` returned.
    :returns: ``(url, seconds)``: the URL without it, and the seconds (None
        for another database).
    """
    parsed = sa.engine.make_url(url)
    if (parsed.get_backend_name() != "postgresql"
            or "read_timeout" not in parsed.query):
        return url, None
    seconds = int(parsed.query["read_timeout"])
    return (parsed.difference_update_query(["read_timeout"])
            .render_as_string(hide_password=False), seconds)


def parameters(text, group):
    """Parse ``connection_parameters``.

    :param text: ``param1=value1&param2=value2``, or empty.
    :param group: the option group, for messages.
    :returns: a dict.
    :raises murano_cidr.exceptions.InvalidConfig: for parameters that
        cannot be parsed, are given twice or have no value.
    """
    if not text:
        return {}
    try:
        pairs = parse.parse_qsl(text, keep_blank_values=True,
                                strict_parsing=True)
    except ValueError as e:
        raise exceptions.InvalidConfig(
            group=group, option="connection_parameters",
            reason="%r is not param1=value1&param2=value2 (%s)" % (text, e))
    names = [name for name, _ in pairs]
    for name, value in pairs:
        if names.count(name) > 1:
            reason = "%s is given twice" % name
        elif not value:
            reason = "%s has no value" % name
        else:
            continue
        raise exceptions.InvalidConfig(group=group,
                                       option="connection_parameters",
                                       reason=reason)
    return dict(pairs)


def merged_url(url, parameters, group):
    """Return the URL to connect to: defaults, then the operator's choices.

    The URL's own query and then ``parameters`` override
    :func:`defaults` key by key; nothing is given twice (a key given twice
    reaches the Python driver as a tuple).

    :param url: the configured URL (a string).
    :param parameters: ``connection_parameters``, parsed
        (:func:`parameters`).
    :param group: the option group, for messages.
    :returns: the URL as a string, password included.
    :raises murano_cidr.exceptions.InvalidConfig: for a parameter with a
        bad value.
    """
    parsed = sa.engine.make_url(url)
    query = defaults(parsed)
    query.update(parsed.query)
    query.update(parameters)
    for name in INTEGERS.intersection(query):
        value = query[name]
        if not (isinstance(value, str) and value.isdigit()):
            raise exceptions.InvalidConfig(
                group=group, option="connection_parameters",
                reason="%s=%s is not a whole number" % (name, value))
    _check_charset(parsed, query.get("charset"), group)
    return parsed.set(query=query).render_as_string(hide_password=False)


def _check_charset(url, charset, group):
    if (charset is None or url.get_driver_name() != "pymysql"
            or pymysql_charset is None):
        return
    try:
        known = pymysql_charset.charset_by_name(charset)
    except (KeyError, AttributeError):
        known = None
    if known is None:
        raise exceptions.InvalidConfig(
            group=group, option="connection_parameters",
            reason="charset=%s is not a MySQL character set" % charset)


def read_committed(engine):
    """Make MySQL sessions read committed data, as PostgreSQL's do.

    An allocation reads a scope's rows after it holds the scope's lock;
    under MySQL's default REPEATABLE READ those reads could come from a
    snapshot older than the lock.

    :param engine: a new SQLAlchemy engine (enginefacade's hook).
    """
    if engine.dialect.name != "mysql":
        return

    def on_connect(dbapi_connection, connection_record):
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("SET SESSION TRANSACTION ISOLATION LEVEL "
                           "READ COMMITTED")
        finally:
            cursor.close()

    sa.event.listen(engine, "connect", on_connect)
