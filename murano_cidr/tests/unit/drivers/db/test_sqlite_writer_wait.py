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

"""A writer queued behind a hung SQLite transaction of its process ends.

The SQLite writers of one process take turns on an in-process lock (see
``sqlite_writer.turn``). A transaction whose ``taken`` never answers (a
Neutron read that hangs) holds it; the next writer must not wait for it
for ever: it fails with ``DatabaseUnavailable`` once ``call_timeout`` has
passed. Before this bound it waited as long as the hung transaction did.
"""

import os
import signal
import threading
import traceback

from murano_cidr.engine import allocator
from murano_cidr import exceptions
from murano_cidr.tests import base as tests_base
from murano_cidr.tests.unit.drivers.db import base

#: A watchdog many times the documented bound (``call_timeout`` = 1 s).
WATCHDOG = 30


class TestWriterBehindAHungTransaction(base.DbTestCase):

    def test_the_queued_writer_fails_typed_within_call_timeout(self):
        self.db_config(call_timeout=1)
        driver = self.make_driver()
        hung, entered = threading.Event(), threading.Event()

        def hanging_taken():
            entered.set()
            hung.wait(WATCHDOG * 2)
            return []

        holder = threading.Thread(target=driver.allocate, args=("net-1",),
                                  kwargs={"scope": "r1",
                                          "taken": hanging_taken})
        holder.start()
        self.addCleanup(holder.join)
        self.addCleanup(hung.set)  # runs first
        self.assertTrue(entered.wait(WATCHDOG))
        outcome = []

        def queued():
            try:
                outcome.append(driver.allocate("net-2", scope="r1"))
            except Exception as e:
                outcome.append(e)

        waiter = threading.Thread(target=queued)
        waiter.start()
        waiter.join(WATCHDOG)
        self.assertFalse(waiter.is_alive(),
                         "the queued writer still waits after %d s" % WATCHDOG)
        self.assertIsInstance(outcome[0], exceptions.DatabaseUnavailable)
        self.assertIn("call_timeout", str(outcome[0]))
        hung.set()
        holder.join(WATCHDOG)
        self.assertEqual(["net-1"], [a.owner for a in driver.list()])


class TestForkDuringAnAllocate(base.DbTestCase):
    """Issue 26.3: a child forked while a parent's writer holds its turn.

    Before, the turn was oslo.concurrency's process-wide internal lock:
    the child inherited it held by a thread it does not have, and every
    write of the child failed after call_timeout with "another writer of
    this process held the SQLite file", from a fresh allocator too. (With
    a turn of its own but forked mid-transaction, SQLite's inherited
    record of the parent thread's lock kept the file locked.)
    """

    def test_the_childs_first_calls_work(self):
        self.db_config(call_timeout=2)
        driver = self.make_driver()
        entered, resume = threading.Event(), threading.Event()

        def paused_taken():
            entered.set()
            resume.wait(WATCHDOG)
            return []

        holder = threading.Thread(target=driver.allocate, args=("net-1",),
                                  kwargs={"scope": "r1",
                                          "taken": paused_taken})
        holder.start()
        self.addCleanup(holder.join)
        self.addCleanup(resume.set)
        self.assertTrue(entered.wait(WATCHDOG))
        # The paused allocation goes on once the fork has begun (the
        # hooks registered last run first).
        os.register_at_fork(before=resume.set)
        pid = os.fork()
        if pid == 0:  # the child: its parent's writer is mid-transaction
            code = 1
            try:
                signal.alarm(WATCHDOG)
                allocator.get_allocator(self.conf).allocate("fresh",
                                                            scope="r2")
                driver.allocate("inherited", scope="r3")
                code = 0
            except BaseException:
                traceback.print_exc()
                code = 3
            finally:
                os._exit(code)
        holder.join(WATCHDOG)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(0, tests_base.exit_code(status))
        self.assertEqual(["fresh", "inherited", "net-1"],
                         sorted(a.owner for a in driver.list()))
