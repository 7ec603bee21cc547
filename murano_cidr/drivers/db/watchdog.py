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

"""A client-side deadline on every wait of the PostgreSQL driver.

A server whose kernel still answers but which never does (stopped, a hung
disk) escapes libpq's ``connect_timeout``, ``tcp_user_timeout`` and
keepalives (its kernel acknowledges everything) and the server's
``statement_timeout`` (its timer does not run). psycopg2's wait callback
would bound it, but it is the whole process's, shared with the host's own
PostgreSQL users. So a watchdog thread cuts a connection that waited
``read_timeout`` since its ping, statement, commit or rollback began: it
shuts the socket down (a duplicate of psycopg2's public ``fileno()``),
libpq returns "server closed the connection unexpectedly", SQLAlchemy drops
the connection, and the call is retried or fails typed. A connection is
watched from its checkout (or creation) to its check-in; ``read_timeout``
is above ``statement_timeout`` and ``idle_in_transaction_session_timeout``,
so only a connection the server would not answer anyway is cut. The thread
is a real one under eventlet too; a forked child starts without it.
"""

import os
import socket
import sys
import threading
import time

import sqlalchemy as sa


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


def _dbapi(connection):  # named dbapi_connection since SQLAlchemy 1.4.24
    fairy = connection.connection
    return getattr(fairy, "dbapi_connection", None) or fairy.connection


def watch(engine, seconds):
    """Give every wait of ``engine``'s PostgreSQL connections a deadline.

    :param engine: a new SQLAlchemy engine (enginefacade's hook).
    :param seconds: how long one wait may last (``read_timeout``); None
        or another database: nothing is watched.
    """
    if not seconds or engine.dialect.name != "postgresql":
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
            _watchdog.arm(_dbapi(conn), seconds)

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
