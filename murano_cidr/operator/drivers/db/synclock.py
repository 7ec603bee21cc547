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

"""One ``db sync`` at a time per database.

Two engines upgraded together run ``murano-cidr-manage db sync`` together.
Without a lock both find no tables and both create them: on PostgreSQL the
loser's ``CREATE TABLE`` collides with the winner's in the catalogue, on
MySQL and MariaDB (whose DDL commits at once) it finds the table already
there. So the migration connection first takes a lock of the database
server, then reads the recorded revision and migrates; the one that waited
finds the schema at head and changes nothing:

* PostgreSQL: a transaction-level advisory lock
  (``pg_advisory_xact_lock``), released when the migration's transaction
  ends, waited for at most :data:`TIMEOUT` seconds (``lock_timeout``).
* MySQL and MariaDB: a named lock (``GET_LOCK``) of the connection's
  session, named after the database, for at most :data:`TIMEOUT` seconds,
  released after the migration. A server that refuses named locks (a
  Galera cluster) is logged and migrated without one: run ``db sync`` on
  one node at a time there.
* SQLite: none needed; the file's own lock serialises writers.
"""

import contextlib

from oslo_log import log as logging
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from murano_cidr import exceptions

LOG = logging.getLogger(__name__)

#: How long a ``db sync`` waits for another one to finish, in seconds.
#: NOTE: below the bounds of every statement (PostgreSQL's
#: ``statement_timeout``, PyMySQL's ``read_timeout``: see
#: :mod:`~murano_cidr.engine.drivers.db.timeouts`), so the wait ends with this
#: module's error rather than a lost connection. One migration step must
#: fit in those bounds anyway.
TIMEOUT = 15

#: The PostgreSQL advisory lock key of ``db sync`` (a fixed 63-bit number,
#: the bytes of "mcidrsyn").
PG_KEY = 0x6d6369647273796e

#: PostgreSQL's SQLSTATE for a lock wait that ran out of ``lock_timeout``.
_PG_LOCK_NOT_AVAILABLE = "55P03"


def _timed_out(url):
    return exceptions.DatabaseUnavailable(
        url=url, reason="another 'db sync' held the schema lock for more "
        "than %d seconds; nothing was changed. Wait for it, then run "
        "'db sync' again" % TIMEOUT)


def _postgresql(connection, url):
    connection.execute(sa.text("SET LOCAL lock_timeout = %d" %
                               (TIMEOUT * 1000)))
    try:
        connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"),
                           {"key": PG_KEY})
    except sa_exc.OperationalError as e:
        if getattr(e.orig, "pgcode", None) == _PG_LOCK_NOT_AVAILABLE:
            raise _timed_out(url)
        raise
    connection.execute(sa.text("SET LOCAL lock_timeout = DEFAULT"))
    # Released with the transaction.
    return None


def _mysql(connection, url):
    name = connection.execute(sa.text(
        "SELECT CONCAT('murano_cidr_sync.', DATABASE())")).scalar()
    try:
        got = connection.execute(sa.text("SELECT GET_LOCK(:name, :timeout)"),
                                 {"name": name, "timeout": TIMEOUT}).scalar()
    except sa_exc.DBAPIError as e:
        LOG.warning("The server of %s refuses named locks (%s): db sync "
                    "runs without one, so run it on one host at a time",
                    url, e.orig)
        return None
    if got != 1:
        raise _timed_out(url)
    return name


_LOCKS = {"postgresql": _postgresql, "mysql": _mysql}


@contextlib.contextmanager
def transaction(connection, url="the database"):
    """Begin the migration's transaction, holding the ``db sync`` lock.

    The lock is taken first in the transaction, before the revision is
    read, and let go only after the transaction ended, so the next sync
    reads what this one committed.

    :param connection: the open SQLAlchemy connection the migration runs
        on, outside any transaction.
    :param url: the database, for messages (no password).
    :raises murano_cidr.exceptions.DatabaseUnavailable: if another sync
        held the lock for more than :data:`TIMEOUT` seconds.
    """
    lock = _LOCKS.get(connection.dialect.name)
    name = None
    try:
        with connection.begin():
            if lock is not None:
                name = lock(connection, url)
            yield
    finally:
        if name is not None:
            # A named lock of MySQL's belongs to the session, not to the
            # transaction.
            connection.execute(sa.text("SELECT RELEASE_LOCK(:name)"),
                               {"name": name})
