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

import logging
import os
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
    logging.basicConfig(filename=os.path.join(directory, name + ".log"),
                        level=logging.WARNING)
    recorder = history.Recorder(os.path.join(directory, name + ".jsonl"),
                                name)
    driver = workers.build_driver(url, SETTINGS, database_settings)
    while True:
        command, owner, scope = commands.get()
        if command == STOP:
            break
        taken = ()
        if command == PAUSED:
            taken = _pause(owner, resume, results)
        start = time.monotonic()
        recorder.allocate(driver, owner, scope=scope, taken=taken)
        op = recorder.ops[-1]
        results.put((op.status, op.error, time.monotonic() - start,
                     op.value))
    driver.close()
    recorder.close()


def _pause(owner, resume, results):
    paused = []

    def taken():
        # Read inside the transaction, once the scope's row is locked.
        if not paused:
            paused.append(True)
            results.put((PAUSED, owner))
            resume.wait(PAUSE_LIMIT)
        return ()

    return taken
