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

"""Workers start with the signals left to their parent."""

import multiprocessing
import os
import signal
import threading
import weakref

from murano_cidr.measuring import workers
from murano_cidr.tests import base

#: Seconds before a test gives up on a worker: many times what it needs.
WATCHDOG = 120


def _report(queue):
    workers.serving()
    queue.put(signal.getsignal(signal.SIGINT) == signal.SIG_IGN)


class TestWorkers(base.TestCase):

    def test_a_signal_waits_until_the_workers_started(self):
        seen = []
        previous = signal.signal(signal.SIGTERM,
                                 lambda signum, frame: seen.append(signum))
        self.addCleanup(signal.signal, signal.SIGTERM, previous)
        ctx = multiprocessing.get_context("spawn")
        with workers.starting():
            # NOTE: to this thread, whose mask holds it back: sent to the
            # process, the signal may reach another thread of the test
            # runner, whose C handler can run after the block has ended
            # (under load it did); the restored handler then runs it late.
            signal.pthread_kill(threading.get_ident(), signal.SIGTERM)
            queue = ctx.Queue()
            process = ctx.Process(target=_report, args=(queue,))
            process.start()
            self.assertEqual([], seen)
        self.assertEqual([signal.SIGTERM], seen)
        # The worker ignores Ctrl-C, which its parent handles.
        self.assertIs(True, queue.get(timeout=120))
        process.join(120)
        self.assertEqual(0, process.exitcode)


class _Driver(object):

    def call(self, queue):
        os.kill(os.getpid(), signal.SIGTERM)
        queue.put("the call returned")


def _call_then_end(queue):
    workers.serving()
    try:
        workers.Guarded(_Driver()).call(queue)
        queue.put("the worker went on")
    finally:
        queue.put("the worker cleaned up")


def _signalled_in_a_callback(queue):
    workers.serving()

    class Thing(object):
        pass

    def callback(ref):
        # The handler runs at the next bytecode: inside this callback,
        # where Python prints an exception and goes on.
        os.kill(os.getpid(), signal.SIGTERM)
        queue.put("the callback went on")

    thing = Thing()
    ref = weakref.ref(thing, callback)
    try:
        del thing
        # Blocked as a worker waiting for its next task is.
        threading.Event().wait(WATCHDOG)
        queue.put("the worker went on")
    finally:
        queue.put("the worker cleaned up")
    return ref


class TestGuarded(base.TestCase):

    def test_sigterm_in_a_weakref_callback_still_ends_the_worker(self):
        ctx = multiprocessing.get_context("spawn")
        queue = ctx.Queue()
        process = ctx.Process(target=_signalled_in_a_callback,
                              args=(queue,))
        process.start()
        self.assertEqual("the worker cleaned up",
                         queue.get(timeout=WATCHDOG * 2))
        process.join(WATCHDOG)
        self.assertEqual(128 + signal.SIGTERM, process.exitcode)

    def test_sigterm_ends_the_worker_once_the_call_returned(self):
        ctx = multiprocessing.get_context("spawn")
        queue = ctx.Queue()
        process = ctx.Process(target=_call_then_end, args=(queue,))
        process.start()
        self.assertEqual(["the call returned", "the worker cleaned up"],
                         [queue.get(timeout=120) for _ in range(2)])
        process.join(120)
        self.assertEqual(128 + signal.SIGTERM, process.exitcode)
