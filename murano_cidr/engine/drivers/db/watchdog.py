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

"""Client-side deadlines on the PostgreSQL driver's waits.

A real thread (also under eventlet) shuts down the socket of a connection
that waited ``read_timeout`` since its ping, statement, commit or rollback
began; under a psycopg2 wait callback (eventlet's) a green timeout bounds
each connection attempt, which libpq's ``connect_timeout`` then does not.
Why and how: ``doc/source/contributor/drivers.rst``.
"""

import os
import socket
import sys
import threading
import time

import sqlalchemy as sa

from murano_cidr.engine.drivers.db import compat


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
            _watchdog.arm(compat.dbapi_connection(conn), seconds)

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
