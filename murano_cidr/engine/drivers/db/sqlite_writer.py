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

"""The SQLite writers of one process: one at a time, on a kept connection.

SQLite makes a second writer wait in its C library (busy timeout, 5 s)
without releasing the interpreter: in an eventlet engine that blocks every
green thread, the writer it waits for included. So a write transaction
first takes this process's turn on the file: a ``threading`` semaphore
(green once eventlet patched the process: looked up per transaction) of
this module's own :class:`oslo_concurrency.lockutils.Semaphores`, waited
for at most ``call_timeout``. Other processes' writers are left to SQLite's
busy timeout. (``eventlet.tpool`` would not do: ``taken`` is a green read.)

The turn's holder writes on the connection its :class:`Writer` keeps:
oslo.db gives an SQLite file no pool, and a connection per transaction
also opens the file, reads its schema and pays 1 to 4 more fsyncs (the
directory for its new WAL handle; as the last one to close, a checkpoint).

A fork waits for this process's writers to finish. The child gets turns
and connections of its own: an inherited turn could be held by a thread
it does not have, and an SQLite connection does not cross a fork.

The file's WAL mode (:func:`wal`), the directory of the default file
(:func:`create_directory`) and the check that ``db sync`` made the file
(:func:`missing_file`) are here too: this module is loaded for an SQLite
database only (and to name the file of a failed call).
"""

import contextlib
import os

from oslo_concurrency import lockutils
from oslo_log import log as logging
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from murano_cidr.engine.drivers.db import connection
from murano_cidr.engine.drivers.db import options as db_options
from murano_cidr import exceptions

LOG = logging.getLogger(__name__)

#: How often a call retries an SQLite file another process writes: more
#: than any call_timeout lets it, so the call's deadline ends the wait.
BUSY_RETRIES = 10 ** 6

#: The prefix of the in-process lock that lets one SQLite writer at a time
#: in; the database's URL follows it.
SQLITE_WRITER_LOCK = "murano-cidr-sqlite-writer:"

#: This process's turns, by name.
_turns = lockutils.Semaphores()
#: The name of every turn, and the longest wait its writers allow.
_waits = {}
#: The turns a fork holds until it is done, in the parent.
_held_for_fork = []
#: In a fork's child, the connections its parent kept: never used nor
#: closed here (an SQLite connection does not cross a fork).
_inherited = []


def _before_fork():
    """Let the writers of this process finish their transaction first."""
    for name, timeout in list(_waits.items()):
        turn = _turns.get(name)
        if turn.acquire(timeout=timeout):
            _held_for_fork.append(turn)


def _after_fork_in_parent():
    while _held_for_fork:
        _held_for_fork.pop().release()


def _after_fork_in_child():
    """Give the child turns of its own, none of them held."""
    global _turns
    _turns = lockutils.Semaphores()
    del _held_for_fork[:]


os.register_at_fork(before=_before_fork,
                    after_in_parent=_after_fork_in_parent,
                    after_in_child=_after_fork_in_child)


class Writer(object):
    """The write transactions of one SQLite database in this process.

    A transaction that fails closes the kept connection.

    :param url: the database's URL, which names the turn.
    :param safe_url: the URL without its password, for messages.
    :param call_timeout: how long to wait for the turn, in seconds.
    """

    def __init__(self, url, safe_url, call_timeout):
        self._name, self._safe_url = SQLITE_WRITER_LOCK + url, safe_url
        self._timeout, self._kept, self._pid = call_timeout, None, os.getpid()
        _waits[self._name] = max(call_timeout, _waits.get(self._name, 0))

    @contextlib.contextmanager
    def transaction(self, engine):
        """Hold the turn; give the kept connection in a transaction.

        :param engine: opens the connection when none is kept.
        :returns: a context manager giving the connection; the transaction
            commits when the block ends, or rolls back if it raises.
        :raises murano_cidr.exceptions.DatabaseUnavailable: if another
            writer of this process held the file for ``call_timeout``.
        """
        turn = _turns.get(self._name)
        if not turn.acquire(timeout=self._timeout):
            raise exceptions.DatabaseUnavailable(
                url=self._safe_url, reason="another writer of this process "
                "held the SQLite file for more than %d s ([%s] "
                "call_timeout)" % (self._timeout, db_options.GROUP))
        try:
            if self._pid != os.getpid():  # a fork's child
                _inherited.append(self._kept)
                self._kept, self._pid = None, os.getpid()
            if self._kept is None:
                self._kept = engine.connect()
            try:
                with self._kept.begin():
                    yield self._kept
            except BaseException:
                self._discard()
                raise
        finally:
            turn.release()
        # The kept connection is never checked in, where the others yield.
        connection.yield_if_green()

    def close(self):
        """Close the kept connection once no transaction runs on it.

        A transaction that runs past ``call_timeout`` keeps it open.
        """
        turn = _turns.get(self._name)
        if turn.acquire(timeout=self._timeout):
            try:
                if self._pid == os.getpid():
                    self._discard()
            finally:
                turn.release()

    def _discard(self):
        kept, self._kept = self._kept, None
        try:
            if kept is not None:
                kept.close()
        except Exception as e:  # a transaction's error is raised instead
            LOG.debug("Closing an SQLite connection failed: %s", e)


def sqlite_file(url):
    """Return the file an SQLite URL names, or None.

    :param url: a URL string or :class:`sqlalchemy.engine.URL`.
    :returns: the path, or None for another database, an in-memory one, a
        URI filename (``file:...``) or a URL that cannot be parsed.
    """
    try:
        parsed = sa.engine.url.make_url(url)
    except (sa_exc.ArgumentError, ValueError, TypeError):
        return None
    database = parsed.database
    if (parsed.get_backend_name() != "sqlite" or not database
            or database == ":memory:" or database.startswith("file:")):
        return None
    return database


def missing_file(url):
    """Return the SQLite file ``url`` names if it does not exist yet.

    Connecting would create an empty file (and its directory) that only
    ``db sync`` may make.

    :param url: the database URL.
    :returns: the path, or None if it exists or is not a file.
    """
    path = sqlite_file(url)
    return path if path is not None and not os.path.exists(path) else None


def create_directory(path):
    """Create the state directory (mode 0700) if it does not exist.

    Done when the database is first used, never by reading commands on a
    database that does not exist (see :func:`missing_file`).

    :param path: ``[cidr_allocator] state_path``, the directory of
        the default file; None does nothing.
    :raises murano_cidr.exceptions.InvalidConfig: if it cannot be created.
    """
    if path is None:
        return
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError as e:
        raise exceptions.InvalidConfig(
            option="state_path",
            reason="cannot create %s for the embedded database: %s"
            % (path, e.strerror or e))


def wal(engine):
    """Let SQLite readers and the writer proceed side by side (WAL).

    :param engine: a new SQLAlchemy engine (enginefacade's hook).
    """
    if engine.dialect.name != "sqlite":
        return
    database = engine.url.database
    if not database or database == ":memory:":
        return

    def on_connect(dbapi_connection, connection_record):
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
        except Exception as e:
            # NOTE: the mode is the file's, kept across connections: one
            # that finds the file held (a checkpoint, a recovery, a
            # writer) goes on in its mode, and a later one sets it.
            if "database is locked" not in str(e):
                raise
        finally:
            cursor.close()

    sa.event.listen(engine, "connect", on_connect)
