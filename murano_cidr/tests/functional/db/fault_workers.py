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

"""The client processes of the network fault tests.

A client is a process with one db driver that runs the test's commands one
at a time and reports how each ended, so that a call that hangs blocks
its own process only, and the test's watchdog (how long it waits for the
report) decides. Every call is recorded for the history checker.
"""

import ctypes
import ctypes.util
import json
import logging
import os
import signal
import sys
import time

from murano_cidr.tests.functional.db import workers
from murano_cidr.tests.functional import history
from murano_cidr.tests.functional import netns
from murano_cidr.tests.functional import netns_reaper

#: The ``[cidr_allocator]`` settings of every client.
SETTINGS = {"driver": "db", "pool_cidrs": ["10.0.0.0/16"],
            "subnet_prefixlen": 24}

#: The longest a paused allocation waits for the test to resume it.
PAUSE_LIMIT = 600

#: Commands.
ALLOCATE = "allocate"
#: An allocation that stops inside its transaction, holding its scope's
#: row lock, reports "paused" and waits for the ``resume`` event.
PAUSED = "paused"
STOP = "stop"


def serve(url, database_settings, namespace, name, directory, commands,
          resume, results):
    """Run ``(command, owner, scope)`` tuples from ``commands``.

    :param namespace: a client namespace to move into first, or None.
    :param directory: where the history (``name``.jsonl) and the log go.
    :param results: gets ``("paused", owner)`` when a paused allocation
        holds its lock, and ``(status, error, seconds, value)`` when a
        call ends.
    """
    if namespace:
        netns.enter(namespace)
    netns_reaper.exit_with_test()
    _serve(url, database_settings, name, directory, commands.get,
           lambda: resume.wait(PAUSE_LIMIT), results.put)


def _serve(url, database_settings, name, directory, next_command,
           wait_resume, report):
    logging.basicConfig(filename=os.path.join(directory, name + ".log"),
                        level=logging.WARNING)
    recorder = history.Recorder(os.path.join(directory, name + ".jsonl"),
                                name)
    driver = workers.build_driver(url, SETTINGS, database_settings)
    while True:
        command, owner, scope = next_command()
        if command == STOP:
            break
        taken = ()
        if command == PAUSED:
            taken = _pause(owner, wait_resume, report)
        start = time.monotonic()
        recorder.allocate(driver, owner, scope=scope, taken=taken)
        op = recorder.ops[-1]
        report((op.status, op.error, time.monotonic() - start, op.value))
    driver.close()
    recorder.close()


def _pause(owner, wait_resume, report):
    paused = []

    def taken():
        # Read inside the transaction, once the scope's row is locked.
        if not paused:
            paused.append(True)
            report((PAUSED, owner))
            wait_resume()
        return ()

    return taken


#: What a client patched as Murano's engine runs: eventlet's
#: monkey_patch() first, as ``murano/monkey_patch.py`` does, before
#: anything else is imported.
PATCHED = ("import eventlet; eventlet.monkey_patch(); "
           "from murano_cidr.tests.functional.db import fault_workers; "
           "fault_workers.serve_lines()")

#: The line on standard input that resumes a paused allocation.
RESUME = "resume"


def serve_lines():
    """:func:`serve` over standard input and output, one JSON per line.

    ``sys.argv[1]`` is the JSON list ``[url, database_settings,
    namespace, name, directory]``; commands come as ``[command, owner,
    scope]`` lines, a paused allocation waits for a :data:`RESUME` line,
    and the reports go to standard output. The process ends with the
    test's (``PR_SET_PDEATHSIG``).
    """
    url, database_settings, namespace, name, directory = json.loads(
        sys.argv[1])
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if namespace:
        netns.enter(namespace)
    # NOTE: non-blocking, so that eventlet's green os.read waits in its
    # hub: the engine's other green threads (and timeouts) go on.
    os.set_blocking(0, False)
    lines = _lines(0)

    def report(outcome):
        os.write(1, (json.dumps(outcome) + "\n").encode())

    def wait_resume():
        while next(lines) != RESUME:
            pass

    _serve(url, database_settings, name, directory,
           lambda: json.loads(next(lines)), wait_resume, report)


_PR_SET_PDEATHSIG = 1


def _lines(fd):
    buffered = b""
    while True:
        while b"\n" not in buffered:
            chunk = os.read(fd, 4096)
            if not chunk:
                os._exit(0)  # the test closed our standard input
            buffered += chunk
        line, buffered = buffered.split(b"\n", 1)
        yield line.decode()
