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

"""The worker processes of ``simulate`` and ``bench``, and their signals.

A terminal sends Ctrl-C (and SIGHUP when it closes) to every process of
the foreground group, the workers included. The workers leave it to their
parent: they ignore SIGINT, so none prints a ``KeyboardInterrupt``
traceback, and the parent, which handles the signal
(:mod:`murano_cidr.operator.cmd.interrupts`), stops them with :func:`stop`
before it removes what the run made. SIGTERM and SIGHUP end a worker with
:class:`SystemExit`, silently, so that its ``finally`` blocks close its
drivers: a tooz coordinator stops and deletes its locks and its heartbeat
key at once, rather than leaving them in the lock service until they
expire. A driver's calls are made through :class:`Guarded`, which lets
these signals end the worker only once the call returns, so that none is
cut short between the lock service granting a lock and tooz recording it.

Workers are started inside :func:`starting` and call :func:`serving`
first: a signal that arrives while a worker starts waits until then
instead of interrupting its imports. multiprocessing's resource tracker,
a process of its own that outlives the workers, is started there too: it
ignores SIGINT and SIGTERM itself, and keeps SIGHUP held back, so a
closing terminal cannot kill it before the parent has released what it
tracks (it ends when the parent does).
"""

import contextlib
from multiprocessing import resource_tracker
import os
import signal
import sys
import threading

#: What a worker leaves to its parent while it starts.
_DEFERRED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: What ends a worker.
_ENDING = (signal.SIGTERM, signal.SIGHUP)
#: Seconds before a signal whose exit was lost is sent again.
RESEND_DELAY = 0.05


@contextlib.contextmanager
def starting():
    """Create the queues and barriers of workers, and start them, inside.

    Signals to this process wait until the end of the block (none is
    lost): the workers it starts inherit them held back until they call
    :func:`serving`, and this process's handlers, which would raise in the
    middle of a start and leave a worker half made, only note them. (A
    signal that another thread of this process receives, whose C handler
    runs only after the block, is handled then by the restored handler.) The
    resource tracker is started first. Outside the main thread the block
    runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted = []
    previous = {}
    for number in _DEFERRED:
        handler = signal.getsignal(number)
        if handler not in (signal.SIG_IGN, None):
            previous[number] = signal.signal(
                number, lambda signum, frame: noted.append(signum))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _DEFERRED)
    try:
        resource_tracker.ensure_running()
        # NOTE: starting the tracker unblocks SIGINT and SIGTERM again.
        signal.pthread_sigmask(signal.SIG_BLOCK, _DEFERRED)
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if noted:
            signal.raise_signal(noted[0])


class _Ending(object):
    """What ends this worker: the first signal, and the calls under way."""

    signum = None
    busy = 0
    raised = False


def _leave():
    if not _Ending.raised:
        _Ending.raised = True
        raise SystemExit(128 + _Ending.signum)


def _end(signum, frame):
    # NOTE: a second signal must not cut the clean-up short; it is
    # ignored here (by _leave), not with SIG_IGN, which would make CPython
    # raise for one already caught and not yet handled.
    if _Ending.signum is None:
        _Ending.signum = signum
    if not _Ending.busy:
        _leave()


def _unraisable(unraisable):
    # NOTE: a signal's handler runs between any two bytecodes of the main
    # thread, also inside a weakref callback or a __del__, where Python
    # prints an exception and goes on: the worker's SystemExit would be
    # lost, with a traceback, and the worker would not end. The signal is
    # sent again a moment later, from a timer's thread, so that its handler
    # runs once this hook and the callback have returned; one that lands
    # in such a place again comes back here, and is sent again.
    if (isinstance(unraisable.exc_value, SystemExit)
            and _Ending.signum is not None and _Ending.raised):
        _Ending.raised = False
        again = threading.Timer(RESEND_DELAY, os.kill,
                                (os.getpid(), _Ending.signum))
        again.daemon = True
        again.start()
        return
    sys.__unraisablehook__(unraisable)


def serving():
    """Take the signals a worker keeps (call it first in a worker).

    SIGINT is ignored; SIGTERM and SIGHUP, held back since the worker
    started, raise :class:`SystemExit` now if they came meanwhile, or
    whenever they come.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.unraisablehook = _unraisable
    for number in _ENDING:
        signal.signal(number, _end)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _DEFERRED)


@contextlib.contextmanager
def held():
    """Let SIGTERM and SIGHUP end the worker only when the block ends.

    Python runs a signal's handler in the main thread whichever thread the
    signal reached, so the handler notes it and this block's end acts on
    it (a signal mask would hold it back from one thread only).
    """
    _Ending.busy += 1
    try:
        yield
    finally:
        _Ending.busy -= 1
        if not _Ending.busy and _Ending.signum is not None:
            _leave()


def guarded(factory, *args):
    """Build a driver with :func:`held` signals; return it :class:`Guarded`.

    :param factory: e.g. :func:`murano_cidr.engine.allocator.get_allocator`.
    :param args: its arguments.
    """
    with held():
        return Guarded(factory(*args))


class Guarded(object):
    """A driver whose calls the signals that end a worker wait for.

    Every method of the driver is called :func:`held`: SIGTERM or SIGHUP
    that comes meanwhile ends the worker when the call returns.
    Each call of a driver has a deadline, and :func:`stop` kills a worker
    that is still running after its timeout.

    :param driver: an
        :class:`~murano_cidr.engine.drivers.base.AllocatorDriver`.
    """

    def __init__(self, driver):
        self._driver = driver

    def __getattr__(self, name):
        attribute = getattr(self._driver, name)
        if not callable(attribute):
            return attribute

        def call(*args, **kwargs):
            with held():
                return attribute(*args, **kwargs)
        return call


def stop(processes, timeout=5.0):
    """End worker processes now and wait for them.

    :param processes: :class:`multiprocessing.Process` objects, started
        or not.
    :param timeout: seconds a worker has to end after SIGTERM before it is
        killed.
    """
    started = [p for p in processes if p.pid is not None]
    for process in started:
        if process.is_alive():
            process.terminate()
    for process in started:
        process.join(timeout)
        if process.is_alive():
            process.kill()
            process.join()
