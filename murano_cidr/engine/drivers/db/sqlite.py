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

"""The SQLite dialect of the ``db`` driver (a ``db_dialects`` plugin).

Its writers of one process take turns on one kept connection
(:class:`Writer`), the file is in WAL mode, ``db sync`` makes the file,
and a file system that is read-only or full is named as the cause of an
error (:meth:`SQLite.diagnose`). Why: ``doc/source/reference/db-driver.rst``.
"""

import contextlib
import os
import sqlite3
import sys
import time

from oslo_concurrency import lockutils
from oslo_log import log as logging
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from murano_cidr.engine.drivers.db import compat
from murano_cidr.engine.drivers.db import connection
from murano_cidr.engine.drivers.db import errors
from murano_cidr.engine.drivers.db import options as db_options
from murano_cidr import exceptions
from murano_cidr import messages

LOG = logging.getLogger(__name__)

#: How often a call retries an SQLite file another process writes: more
#: than any call_timeout lets it, so the call's deadline ends the wait.
BUSY_RETRIES = 10 ** 6

#: SQLite's primary result codes of a file it cannot open, read or write:
#: SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN.
FILE_ERRORS = frozenset({8, 10, 13, 14})
#: Less free space than this (bytes) counts as a full file system.
LOW_SPACE = 256 * 1024

#: The prefix of the in-process lock that lets one SQLite writer at a time
#: in; the database's URL follows it.
SQLITE_WRITER_LOCK = "murano-cidr-sqlite-writer:"

#: This process's turns, by name.
_turns = lockutils.Semaphores()
#: The name of every turn, and the longest wait its writers allow.
_waits = {}
#: The turns a fork holds until it is done, in the parent.
_held_for_fork = []
#: In a fork's child, the connections its parent kept (never used).
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

    One at a time, on a kept connection (closed when a transaction fails).

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
        _yield_if_green()

    def close(self):
        """Close the kept connection once no transaction runs on it."""
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
    """Return the file an SQLite URL (string or parsed) names, or None."""
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
    """Return the SQLite file ``url`` names if it does not exist yet."""
    path = sqlite_file(url)
    return path if path is not None and not os.path.exists(path) else None


def create_directory(path):
    """Create ``state_path``, the default file's directory (mode 0700).

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
    """Let a new engine's readers and writer proceed side by side (WAL)."""
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
            # NOTE: the mode is the file's: a later connection sets it.
            if "database is locked" not in str(e):
                raise
        finally:
            cursor.close()

    sa.event.listen(engine, "connect", on_connect)


def _yield_if_green():
    # NOTE: connection.yield_if_green, kept on this module's path.
    eventlet = sys.modules.get("eventlet")
    if eventlet is not None and eventlet.patcher.is_monkey_patched("thread"):
        time.sleep(0)


def sqlite_error(error):
    """Return the :class:`sqlite3.Error` inside an error, or None."""
    for failure in errors.chain(error):
        if isinstance(failure, sqlite3.Error):
            return failure
    return None


def file_fault(url, safe_url, error):
    """Return the DatabaseReadOnly or DatabaseFull behind an error, or None."""
    path = sqlite_file(url)
    failure = sqlite_error(error)
    if path is None or failure is None:
        return None
    code = getattr(failure, "sqlite_errorcode", None)
    if code is not None and code & 0xff not in FILE_ERRORS:
        return None
    directory = os.path.dirname(os.path.abspath(path))
    reason = messages.one_line(failure)
    try:
        stat = os.statvfs(directory)
    except OSError:
        return None
    if stat.f_flag & os.ST_RDONLY:
        return exceptions.DatabaseReadOnly(
            url=safe_url, path=directory, reason=reason,
            cause="%s is on a file system mounted read-only" % directory)
    free = stat.f_bavail * stat.f_frsize
    if free < LOW_SPACE:
        return exceptions.DatabaseFull(url=safe_url, path=directory,
                                       free=free, reason=reason)
    for target in (directory, path):
        if os.path.exists(target) and not os.access(target, os.W_OK):
            return exceptions.DatabaseReadOnly(
                url=safe_url, path=target, reason=reason,
                cause="%s is not writable by this user" % target)
    return None


def missing_sqlite_file(safe_url, path, creatable):
    """Return the error of a missing SQLite file's path, or None.

    DatabasePermissionDenied for a directory above it this user may not
    enter; InvalidConfig for a missing directory ``db sync`` would not
    create (``creatable``).
    """
    directory = os.path.dirname(os.path.abspath(path))
    parent = directory
    while not os.path.isdir(parent) and os.path.dirname(parent) != parent:
        parent = os.path.dirname(parent)
    if not os.access(parent, os.R_OK | os.X_OK):
        return exceptions.DatabasePermissionDenied(url=safe_url, path=parent)
    if parent != directory and not creatable:
        return errors.invalid_url(safe_url, "the directory %s does not exist"
                                  % directory)
    return None


class SQLite(connection.Dialect):
    """SQLite: one host's file, its writers taking turns."""

    busy_retries = BUSY_RETRIES

    def connect_url(self, url, given, group):
        """The URL with ``connection_parameters`` and any-thread use."""
        # NOTE: ":memory:" named: 1.3 parses "sqlite://?q=1" as a host.
        query = {**url.query, **given, "check_same_thread": "false"}
        return compat.url_string(url, query=query,
                                 database=url.database or ":memory:"), None

    def engine_created(self, engine, seconds):
        """Put the file in WAL mode (:func:`wal`)."""
        wal(engine)

    def writer(self, url, safe_url, call_timeout):
        """Return this process's :class:`Writer` of the file."""
        return Writer(url, safe_url, call_timeout)

    def prepare(self, directory):
        """Create the default file's directory (:func:`create_directory`)."""
        create_directory(directory)

    def missing(self, url, safe_url, creatable):
        """The error of a file ``db sync`` has not made, or None."""
        path = missing_file(url)
        if path is None:
            return None
        return missing_sqlite_file(safe_url, path, creatable) or (
            exceptions.DatabaseNotSynced(
                url=safe_url, reason="the SQLite file %s does not exist yet"
                % path))

    def busy(self, error):
        """SQLite's "database is locked": tried again until the deadline."""
        return (isinstance(error, sa_exc.OperationalError)
                and "database is locked" in str(error))

    def diagnose(self, url, safe_url, error, creatable):
        """Name a read-only or full file system, or a missing directory."""
        path = sqlite_file(url)
        if path is None:  # in memory, or a URI: no file system to look at
            return connection.Dialect.diagnose(self, url, safe_url, error,
                                               creatable)
        fault = file_fault(url, safe_url, error)
        if fault is None and not os.path.exists(path):
            fault = missing_sqlite_file(safe_url, path, creatable)
        return fault
