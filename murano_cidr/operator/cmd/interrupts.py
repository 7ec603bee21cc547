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

"""A command ended by SIGINT, SIGTERM or SIGHUP: clean-up, one line, 128+N.

While a command runs (:func:`handled`), each of these signals raises
:class:`Interrupted` in the main thread, so every ``finally`` and ``with``
block runs: worker processes are stopped, temporary files and the rows a
tool made are removed. The first signal ends the command; the ones after it
are ignored until it has cleaned up, so a second Ctrl-C cannot cut the
clean-up short. :func:`murano_cidr.operator.cmd.common.run` turns it into one
line on standard error and the shell's exit code for a signal, 128 + N.

A signal the command was started with ignored (``nohup`` ignores SIGHUP)
stays ignored.
"""

import contextlib
import os
import signal
import sys
import threading

from murano_cidr.operator.operations import files

#: The signals that end a command cleanly.
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """The command was ended by a signal.

    A :class:`KeyboardInterrupt`, so that ``except Exception`` blocks let
    it through, as they let Ctrl-C through.

    :ivar signum: the signal's number.
    """

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self):
        """128 + the signal's number, as a shell reports it."""
        return 128 + self.signum

    def __str__(self):
        return "interrupted by %s" % signal.Signals(self.signum).name


def _interrupt(signum, frame):
    for number in SIGNALS:
        signal.signal(number, signal.SIG_IGN)
    raise Interrupted(signum)


@contextlib.contextmanager
def handled():
    """Raise :class:`Interrupted` on :data:`SIGNALS` inside the block.

    Outside the main thread (where Python runs signal handlers) the block
    runs unchanged. The handlers in place before are put back at the end.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.getsignal(number) for number in SIGNALS}
    for number, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(number, _interrupt)
    # A blocking read of a pipe waits on this pipe too: a signal that
    # comes just before the read ends it (see files.signal_fd).
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    previous_fd = signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    files.signal_fd = wake_r
    try:
        yield
    finally:
        files.signal_fd = None
        signal.set_wakeup_fd(previous_fd)
        os.close(wake_r)
        os.close(wake_w)
        for number, handler in previous.items():
            if handler is not None:
                signal.signal(number, handler)


def report(prog, error):
    """Print the one line of an interrupted command; return its exit code.

    :param prog: the program name, prefixed to the line.
    :param error: the :class:`KeyboardInterrupt` (a plain one is SIGINT).
    :returns: 128 + the signal's number.
    """
    if not isinstance(error, Interrupted):
        error = Interrupted(signal.SIGINT)
    print("%s: %s" % (prog, error), file=sys.stderr)
    return error.exit_code
