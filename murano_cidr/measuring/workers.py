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
(:mod:`murano_cidr.cmd.interrupts`), stops them with :func:`stop` before
it removes what the run made. SIGTERM and SIGHUP keep their default
action in a worker: they end it at once, silently.

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
import signal
import threading

#: What a worker leaves to its parent while it starts.
_DEFERRED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def starting():
    """Create the queues and barriers of workers, and start them, inside.

    Signals to this process wait until the end of the block (none is
    lost): the workers it starts inherit them held back until they call
    :func:`serving`, and this process's handlers, which would raise in the
    middle of a start and leave a worker half made, only note them. The
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


def serving():
    """Take the signals a worker keeps (call it first in a worker).

    SIGINT is ignored; SIGTERM and SIGHUP, held back since the worker
    started, end it now if they came meanwhile.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _DEFERRED)


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
