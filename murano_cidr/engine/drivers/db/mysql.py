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

"""The MySQL/MariaDB dialect of the ``db`` driver (a ``db_dialects`` plugin).

Default connection parameters (:data:`DEFAULTS`: the character set and
the bounds of every wait), the check of a ``charset`` the operator gives,
READ COMMITTED sessions (:func:`read_committed`) and the server's
refusals named.
"""

import sqlalchemy as sa

from murano_cidr.engine.drivers.db import connection
from murano_cidr import exceptions

try:
    from pymysql import charset as pymysql_charset
except ImportError:  # the [mysql] extra is not installed
    pymysql_charset = None

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

#: The default connection parameters of PyMySQL and mysqlclient.
DEFAULTS = {
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

#: The Python drivers :data:`DEFAULTS` are for; others get the character
#: set alone (their parameters have other names).
DRIVERS = frozenset(("pymysql", "mysqldb"))


def defaults(url):
    """Return the default connection parameters of a MySQL URL.

    :param url: a :class:`sqlalchemy.engine.URL` of MySQL or MariaDB.
    :returns: a new dict.
    """
    if url.get_driver_name() in DRIVERS:
        return dict(DEFAULTS)
    return {"charset": DEFAULTS["charset"]}


def check_charset(url, charset, group):
    """Refuse a ``charset`` that PyMySQL does not know.

    :param url: the parsed URL.
    :param charset: the ``charset`` parameter, or None.
    :param group: the option group, for messages.
    :raises murano_cidr.exceptions.InvalidConfig: for an unknown one.
    """
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


#: MySQL/MariaDB server errors that name the configuration's fault.
REFUSALS = {
    1044: "the user may not use this database",
    1045: "the server refused the user name or password",
    1049: "the database does not exist"}


class MySQL(connection.Dialect):
    """MySQL and MariaDB through PyMySQL or mysqlclient."""

    def defaults(self, url):
        """:func:`defaults`."""
        return defaults(url)

    def check(self, url, query, group):
        """Refuse a ``charset`` PyMySQL does not know."""
        check_charset(url, query.get("charset"), group)

    def engine_created(self, engine, seconds):
        """Make the sessions READ COMMITTED (:func:`read_committed`)."""
        read_committed(engine)

    def refused(self, error):
        """Name a refused user, password or database (PyMySQL's codes)."""
        args = getattr(error, "args", ())
        if (type(error).__module__.startswith("pymysql") and args
                and args[0] in REFUSALS):
            return REFUSALS[args[0]]
        return None
