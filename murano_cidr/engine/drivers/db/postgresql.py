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

"""The PostgreSQL dialect of the ``db`` driver (a ``db_dialects`` plugin).

Default connection parameters that bound every wait, a client-side
deadline on each wait (a real thread cuts a connection that waited
``read_timeout``, also under eventlet), a green timeout on each connection
attempt under a psycopg2 wait callback, and the server's refusals named.
What each bounds: ``doc/source/admin/timeouts.rst``.
"""

import os
import socket
import sys
import threading
import time

import sqlalchemy as sa

from murano_cidr.engine.drivers.db import connection

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
#: Client side (the watchdog's): seconds one wait for the server may last;
#: above statement_timeout (its answer comes first).
PG_READ_TIMEOUT = 25
#: Server side: milliseconds a transaction may wait for its client before
#: the server ends it and frees its locks (a client cut off mid-call).
PG_IDLE_IN_TRANSACTION_TIMEOUT = 15000

#: The default connection parameters of psycopg2 and psycopg.
DEFAULTS = {
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

#: psycopg2's refused connections carry no SQLSTATE, only the server's
#: text (English unless its lc_messages says otherwise).
REFUSALS = {
    "password authentication failed":
        "the server refused the user name or password",
    "role \"": "the user does not exist",
    "does not exist": "the database does not exist"}


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


def _threading():
    eventlet = sys.modules.get("eventlet")
    if eventlet is not None and eventlet.patcher.is_monkey_patched("thread"):
        return eventlet.patcher.original("threading")
    return threading


def _cut(dbapi_connection):
    try:
        with socket.socket(fileno=os.dup(dbapi_connection.fileno())) as dup:
            dup.shutdown(socket.SHUT_RDWR)
    except Exception:  # closed meanwhile: nothing to cut
        pass


class Watchdog(object):
    """The connections being waited on, and the thread that cuts them."""
    def __init__(self):
        self._threading = _threading()
        self._changed = self._threading.Condition()
        self._armed = {}
        self._thread = None

    def arm(self, dbapi_connection, seconds):
        """Cut ``dbapi_connection`` unless re-armed or disarmed in time."""
        deadline = time.monotonic() + seconds
        with self._changed:
            was_empty = not self._armed
            self._armed[id(dbapi_connection)] = (deadline, dbapi_connection)
            if self._thread is None:
                self._thread = self._threading.Thread(
                    target=self._run, name="murano-cidr-db-watchdog",
                    daemon=True)
                self._thread.start()
            elif was_empty:
                self._changed.notify()

    def disarm(self, dbapi_connection):
        with self._changed:
            self._armed.pop(id(dbapi_connection), None)

    def _run(self):
        with self._changed:
            while True:
                now = time.monotonic()
                for key, (deadline, conn) in list(self._armed.items()):
                    if deadline <= now:
                        del self._armed[key]
                        _cut(conn)
                soonest = min((d for d, _ in self._armed.values()),
                              default=None)
                self._changed.wait(None if soonest is None else soonest - now)


_watchdog = Watchdog()


def _after_fork_in_child():
    global _watchdog
    _watchdog = Watchdog()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _bounded_connect(dialect, conn_rec, cargs, cparams):
    # NOTE: the wait callback is the whole process's (Murano's own
    # connections use it): this bounds murano-cidr's connections only.
    eventlet = sys.modules.get("eventlet")
    seconds = int(cparams.get("connect_timeout") or 0)
    if (eventlet is None or not seconds or dialect.driver != "psycopg2"
            or dialect.dbapi.extensions.get_wait_callback() is None):
        return None
    with eventlet.Timeout(seconds, dialect.dbapi.OperationalError(
            "timeout expired (connect_timeout=%d s, timed by murano-cidr "
            "under a wait callback)" % seconds)):
        return dialect.connect(*cargs, **cparams)


def watch(engine, seconds):
    """Give every wait of ``engine``'s PostgreSQL connections a deadline.

    :param engine: a new SQLAlchemy engine (enginefacade's hook).
    :param seconds: how long one wait may last (``read_timeout``); None
        or 0: only connection attempts are bounded (under a wait
        callback). Another database: nothing is watched.
    """
    if engine.dialect.name != "postgresql":
        return
    sa.event.listen(engine, "do_connect", _bounded_connect)
    if not seconds:
        return

    def arm(dbapi_connection, *args):
        if dbapi_connection is not None:
            _watchdog.arm(dbapi_connection, seconds)

    def disarm(dbapi_connection, *args):
        if dbapi_connection is not None:
            _watchdog.disarm(dbapi_connection)

    sa.event.listen(engine, "first_connect", arm, insert=True)
    sa.event.listen(engine, "connect", arm, insert=True)
    for name in ("checkout", "reset"):
        sa.event.listen(engine, name, arm)
    for name in ("checkin", "invalidate", "soft_invalidate", "close"):
        sa.event.listen(engine, name, disarm)
    sa.event.listen(
        engine, "before_cursor_execute",
        lambda conn, cursor, *args: _watchdog.arm(cursor.connection,
                                                  seconds))

    def arm_transaction_end(conn):
        # NOTE: a connection lost mid-transaction is invalidated: there is
        # nothing to wait on, and asking for its DBAPI connection would
        # raise PendingRollbackError in place of the error that lost it
        # (which the driver retries).
        if not conn.invalidated:
            fairy = conn.connection  # compat.dbapi_connection, inline
            _watchdog.arm(getattr(fairy, "dbapi_connection", None)
                          or fairy.connection, seconds)

    for name in ("commit", "rollback"):
        sa.event.listen(engine, name, arm_transaction_end)
    # NOTE: oslo.db's ping at checkout comes before any event of the
    # checkout: the public do_ping of this engine's own dialect is
    # wrapped (SQLAlchemy has no event before it).
    ping = engine.dialect.do_ping

    def armed_ping(dbapi_connection):
        _watchdog.arm(dbapi_connection, seconds)
        return ping(dbapi_connection)

    engine.dialect.do_ping = armed_ping


class PostgreSQL(connection.Dialect):
    """PostgreSQL through psycopg2 or psycopg: every wait bounded."""

    def defaults(self, url):
        """:data:`DEFAULTS`, without tcp_user_timeout before libpq 12."""
        if url.get_driver_name() not in ("psycopg2", "psycopg"):
            return {}
        found = dict(DEFAULTS)
        if libpq_version(url.get_driver_name()) < LIBPQ_TCP_USER_TIMEOUT:
            del found["tcp_user_timeout"]
        return found

    def read_timeout(self, query):
        """``read_timeout`` is the watchdog's, not libpq's: taken out."""
        if "read_timeout" in query:
            return int(query.pop("read_timeout"))
        return None

    def engine_created(self, engine, seconds):
        """Bound every wait of the engine's connections (:func:`watch`)."""
        watch(engine, seconds)

    def lost(self, error):
        """psycopg's OperationalError without an SQLSTATE: no connection."""
        kind = type(error)
        return (kind.__name__ == "OperationalError"
                and kind.__module__.split(".")[0] in ("psycopg2", "psycopg")
                and getattr(error, "pgcode", None) is None
                and getattr(error, "sqlstate", None) is None)

    def refused(self, error):
        """Name a refused password, user or database in psycopg2's text."""
        args = getattr(error, "args", ())
        if not type(error).__module__.startswith("psycopg2") or not args:
            return None
        text = str(args[0])
        for fragment, why in REFUSALS.items():
            if fragment in text and (fragment != "does not exist"
                                     or "database \"" in text):
                return why
        return None
