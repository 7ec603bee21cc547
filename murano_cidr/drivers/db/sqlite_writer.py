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

"""The turns SQLite writers of one process take on the database file.

SQLite makes a second writer wait in its C library (busy timeout, 5 s)
without releasing the interpreter: in an eventlet engine that blocks every
green thread, the writer it waits for included. So a write transaction
first takes this process's turn on the file (:func:`turn`): a
``threading`` semaphore (green once eventlet patched the process: looked
up per transaction) of this module's own
:class:`oslo_concurrency.lockutils.Semaphores`, never oslo.concurrency's
process-wide ones. Only other processes' writers are left to SQLite's busy
timeout. (``eventlet.tpool`` would not do: ``taken`` is a green read.) The
wait is bounded by ``call_timeout``: writers queued behind a hung
transaction fail with ``DatabaseUnavailable``.

A fork waits for this process's writers to finish (each at most its
``call_timeout``), and the child gets turns of its own: forked
mid-transaction, it would inherit a turn held by a thread it does not
have, and SQLite's record of that thread's lock on the file.
"""

import contextlib
import os

from oslo_concurrency import lockutils
from oslo_log import log as logging

from murano_cidr.drivers.db import options as db_options
from murano_cidr import exceptions

LOG = logging.getLogger(__name__)

#: The prefix of the in-process lock that lets one SQLite writer at a time
#: in; the database's URL follows it.
SQLITE_WRITER_LOCK = "murano-cidr-sqlite-writer:"

#: This process's turns, by name.
_turns = lockutils.Semaphores()
#: The name of every turn taken, and the longest wait its writers allow.
_waits = {}
#: The turns a fork holds until it is done, in the parent.
_held_for_fork = []


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


@contextlib.contextmanager
def turn(url, safe_url, call_timeout):
    """Hold this process's turn to write the SQLite file of ``url``.

    :param url: the database's URL, which names the lock.
    :param safe_url: the URL without its password, for the message.
    :param call_timeout: how long to wait for the turn, in seconds
        (``[cidr_allocator_database] call_timeout``).
    :raises murano_cidr.exceptions.DatabaseUnavailable: if another writer
        of this process held the file for longer.
    """
    name = SQLITE_WRITER_LOCK + url
    _waits[name] = max(call_timeout, _waits.get(name, 0))
    lock = _turns.get(name)
    if not lock.acquire(timeout=call_timeout):
        raise exceptions.DatabaseUnavailable(
            url=safe_url, reason="another writer of this process "
            "held the SQLite file for more than %d s ([%s] "
            "call_timeout)" % (call_timeout, db_options.GROUP))
    try:
        yield
    finally:
        lock.release()
