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

"""The two runtimes an engine process of the functional tests runs in.

``plain``: a process started with multiprocessing's ``spawn`` method.
``patched``: the same, patched as Murano's engine is: the child's very
first statements are ``import eventlet; eventlet.monkey_patch()`` (what
``murano/monkey_patch.py`` does, at eventlet's defaults), before
multiprocessing, murano_cidr or anything else is imported; then it
unpickles its target and arguments as a spawned child does, so both
runtimes run the same functions with the same queues.

A forked child, or a spawned one that patches itself in its target, is
not that: the modules it imported before (threading, socket, select,
multiprocessing's pipes) stay unpatched.
"""

import multiprocessing
from multiprocessing import context
from multiprocessing import popen_spawn_posix
from multiprocessing import spawn
import os
import sys
import threading
import unittest

import testscenarios
import testtools

PLAIN = "plain"
PATCHED = "patched"
RUNTIMES = (PLAIN, PATCHED)

#: testscenarios' scenarios of a test class whose engines run in both.
SCENARIOS = [(runtime, {"runtime": runtime}) for runtime in RUNTIMES]

#: Run every cell in both runtimes, not only those CI runs patched.
ALL_FAULTS = os.environ.get("MURANO_CIDR_ALL_FAULTS") == "1"

#: What a patched child runs first, as murano/monkey_patch.py does; then
#: the harness's own pipes are made to wait in eventlet's hub
#: (:func:`green_pipes`).
BOOTSTRAP = ("import eventlet; eventlet.monkey_patch(); "
             "from murano_cidr.tests.functional import runtimes; "
             "runtimes.green_pipes(); ")

_launching = threading.local()
_plain_command_line = spawn.get_command_line


def green_pipes():
    """Make a patched child's multiprocessing pipes wait in eventlet's hub.

    eventlet's green ``os.read`` before 0.33 (the floor jobs' 0.31.1)
    first reads a blocking pipe with a blocking read(2): a child waiting
    on its commands queue then stopped every green thread, the feeder
    thread of its results queue too, and its report never left. A pipe
    made non-blocking before each read waits in the hub instead. Only
    the test harness's pipes change; Murano's engine has none.
    """
    from multiprocessing import connection
    receive = connection.Connection._recv

    def _recv(self, *args, **kwargs):
        os.set_blocking(self._handle, False)
        return receive(self, *args, **kwargs)

    connection.Connection._recv = _recv


def current():
    """Return the runtime of this process: :data:`PATCHED` or :data:`PLAIN`.

    A process where eventlet has not patched ``socket`` and ``thread`` is
    plain, whether or not something imported eventlet.
    """
    patcher = sys.modules.get("eventlet.patcher")
    if patcher is not None and all(patcher.is_monkey_patched(name)
                                   for name in ("socket", "thread")):
        return PATCHED
    return PLAIN


def _command_line(**kwds):
    argv = _plain_command_line(**kwds)
    if getattr(_launching, "patched", False):
        index = argv.index("-c") + 1
        argv[index] = BOOTSTRAP + argv[index]
    return argv


class _PatchedPopen(popen_spawn_posix.Popen):
    """Start a spawned child whose program patches eventlet first."""

    def _launch(self, process_obj):
        # NOTE: multiprocessing builds the child's command line in
        # spawn.get_command_line(), with no hook of its own; the test
        # process's function is wrapped once, and prefixes the program
        # only for the launches of this thread made here.
        if spawn.get_command_line is not _command_line:
            spawn.get_command_line = _command_line
        _launching.patched = True
        try:
            super()._launch(process_obj)
        finally:
            _launching.patched = False


class PatchedProcess(context.SpawnProcess):
    """A spawned process patched by eventlet before anything is imported."""

    @staticmethod
    def _Popen(process_obj):
        return _PatchedPopen(process_obj)


class PatchedContext(context.SpawnContext):
    """multiprocessing's ``spawn`` context, its processes patched."""

    Process = PatchedProcess


def get_context(runtime):
    """Return a multiprocessing context starting processes in ``runtime``.

    :param runtime: :data:`PLAIN` or :data:`PATCHED`.
    """
    if runtime == PATCHED:
        return PatchedContext()
    if runtime == PLAIN:
        return multiprocessing.get_context("spawn")
    raise ValueError("unknown runtime %r" % (runtime,))


def describe(replies):
    """Put what this process's runtime is on ``replies`` (a child's target).

    :param replies: a queue receiving ``{"runtime": ..., "green_pipes":
        ...}``, the latter True when multiprocessing reads its pipes with
        eventlet's ``os.read`` (it was imported after the patch).
    """
    from multiprocessing import connection
    patcher = sys.modules.get("eventlet.patcher")
    original = (patcher.original("os").read if patcher is not None
                else None)
    replies.put({"runtime": current(),
                 "green_pipes": (original is not None
                                 and connection.Connection._read
                                 is not original)})


def load_tests(loader, tests, pattern):
    """Apply :data:`SCENARIOS`; leave out the cells run by hand.

    A test class lists the cells (test method names) CI runs patched in
    its ``patched_in_ci``; the others run patched with
    ``MURANO_CIDR_ALL_FAULTS=1``. The cells in its ``by_hand`` run, in
    both runtimes, only then. They are not collected at all (rather than
    skipped), so a run that reports no skip ran every cell it collected.
    Use as a test module's ``load_tests``.
    """
    suite = unittest.TestSuite()
    for test in testtools.iterate_tests(
            testscenarios.load_tests_apply_scenarios(loader, tests,
                                                     pattern)):
        name = test._testMethodName
        if ALL_FAULTS or (
                name not in getattr(test, "by_hand", ())
                and (getattr(test, "runtime", PLAIN) != PATCHED
                     or name in getattr(test, "patched_in_ci", ()))):
            suite.addTest(test)
    return suite
