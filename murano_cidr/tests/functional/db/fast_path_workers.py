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

"""Threads sharing one db driver, hence one summary, in a worker process.

Run by :mod:`murano_cidr.tests.functional.db.test_fast_path`: each thread
records its calls (:mod:`murano_cidr.tests.functional.history`) on a file
of its own.
"""

import logging
import os
import threading
import time

from murano_cidr.drivers.db import queries
from murano_cidr.tests.functional.db import workers
from murano_cidr.tests.functional import history

#: Seconds the threads of a worker may take, all together.
WATCHDOG = 90


def _count_fast_inserts(counter, lock):
    """Count the inserts that trusted a current summary and succeeded."""
    real_locking, real_unless = (queries.lock_and_insert,
                                 queries.insert_unless_taken)

    def locking(*args, **kwargs):
        generation, inserted = real_locking(*args, **kwargs)
        with lock:
            counter[0] += inserted
        return generation, inserted

    def unless(*args, **kwargs):
        inserted = real_unless(*args, **kwargs)
        with lock:
            counter[0] += inserted
        return inserted

    queries.lock_and_insert = locking
    queries.insert_unless_taken = unless


def allocate_in_threads(url, settings, scope, name, directory, threads,
                        steps, barrier, results):
    """Run ``threads`` threads on one driver, ``steps`` steps each.

    A step allocates an owner in ``scope`` and confirms it; every fourth
    owner is released at once. Odd threads pass a callable ``taken``
    (read after the lock), even ones a static one.

    Puts ``(steps made, names of the threads still running at the
    watchdog, fast inserts)`` on ``results``.
    """
    logging.basicConfig(filename=os.path.join(directory, name + ".log"),
                        level=logging.WARNING)
    driver = workers.build_driver(url, settings)
    fast, lock = [0], threading.Lock()
    # NOTE: in this worker process only: the lock and insert of the
    # first allocation of a thread is counted too, when it trusts.
    _count_fast_inserts(fast, lock)
    start = threading.Barrier(threads)
    made = [0] * threads

    def run(t):
        thread = "%s-t%d" % (name, t)
        recorder = history.Recorder(
            os.path.join(directory, thread + ".jsonl"), thread)
        taken = list if t % 2 else ()
        start.wait(WATCHDOG)
        for n in range(steps):
            owner = "%s-n%d" % (thread, n)
            if recorder.allocate(driver, owner, scope=scope,
                                 taken=taken) is not None:
                recorder.confirm(driver, owner)
                if n % 4 == 3:
                    recorder.release(driver, owner)
            made[t] = n + 1
        recorder.close()

    running = [threading.Thread(target=run, args=(t,), daemon=True)
               for t in range(threads)]
    barrier.wait()
    deadline = time.monotonic() + WATCHDOG
    for thread in running:
        thread.start()
    for thread in running:
        thread.join(max(0, deadline - time.monotonic()))
    hung = ["%s-t%d" % (name, t) for t, thread in enumerate(running)
            if thread.is_alive()]
    if not hung:
        driver.close()
    results.put((sum(made), hung, fast[0]))
