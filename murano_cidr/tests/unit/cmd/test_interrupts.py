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

"""A signal ends a command through its clean-up: one line, exit 128 + N."""

import os
import signal
import threading
import time

from murano_cidr.operator.cmd import common
from murano_cidr.operator.cmd import interrupts
from murano_cidr.operator.operations import files
from murano_cidr.tests import base

#: Seconds before the test gives up on a read the signal did not end:
#: many times what ending it takes.
WATCHDOG = 60.0


class TestInterrupts(base.TestCase):

    def setUp(self):
        super().setUp()
        # NOTE: what an interactive shell gives a command, whatever the
        # runner inherited: a shell without job control starts background
        # jobs (a CI script's) with SIGINT ignored, and an ignored signal
        # stays ignored (test_an_ignored_signal_stays_ignored).
        for number in interrupts.SIGNALS:
            default = (signal.default_int_handler
                       if number == signal.SIGINT else signal.SIG_DFL)
            self.addCleanup(signal.signal, number,
                            signal.signal(number, default))

    def run_until(self, signum, handlers=None, again=True):
        """Run a command that sends itself ``signum``; note its clean-up."""
        cleaned = []

        def command():
            try:
                os.kill(os.getpid(), signum)
                # Python runs the handler between two bytecodes: by here.
                cleaned.append("not interrupted")
            finally:
                if again:
                    # A second signal during the clean-up changes nothing.
                    os.kill(os.getpid(), signal.SIGINT)
                cleaned.append("cleaned")
        for number, handler in (handlers or {}).items():
            self.addCleanup(signal.signal, number,
                            signal.signal(number, handler))
        code, _out, err = self.run_main(
            lambda argv: common.run("murano-cidr", command, self.conf))
        return code, err, cleaned

    def test_each_signal_exits_128_plus_n_after_the_clean_up(self):
        for signum, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143),
                             (signal.SIGHUP, 129)):
            before = {n: signal.getsignal(n) for n in interrupts.SIGNALS}
            got, err, cleaned = self.run_until(signum)
            self.assertEqual(code, got)
            self.assertEqual(["cleaned"], cleaned)
            self.assertEqual("murano-cidr: interrupted by %s\n"
                             % signal.Signals(signum).name, err)
            # The handlers in place before are back.
            self.assertEqual(before, {n: signal.getsignal(n)
                                      for n in interrupts.SIGNALS})

    def test_an_ignored_signal_stays_ignored(self):
        code, err, cleaned = self.run_until(
            signal.SIGHUP, {signal.SIGHUP: signal.SIG_IGN}, again=False)
        self.assertEqual(0, code)
        self.assertEqual(["not interrupted", "cleaned"], cleaned)
        self.assertEqual("", err)

    def test_a_plain_keyboard_interrupt_is_sigint(self):
        def command():
            raise KeyboardInterrupt()
        code, _out, err = self.run_main(
            lambda argv: common.run("murano-cidr", command, self.conf))
        self.assertEqual(130, code)
        self.assertEqual("murano-cidr: interrupted by SIGINT\n", err)

    def test_a_signal_the_read_does_not_see_still_ends_it(self):
        # A signal that comes just before a blocking read() does not
        # interrupt it (the C handler ran, Python's has not yet). The same
        # holds for a signal delivered to another thread while the main
        # one reads, which a test can arrange: the main thread blocks
        # SIGTERM, so the kernel hands it to the sender thread.
        read_end, write_end = os.pipe()
        self.addCleanup(os.close, write_end)
        self.addCleanup(os.close, read_end)
        main = threading.get_native_id()
        blocked, done = threading.Event(), threading.Event()
        watchdog = []

        def waiting():
            with open("/proc/self/task/%d/wchan" % main) as f:
                wchan = f.read()
            return wchan.endswith("pipe_read") or wchan.startswith(
                ("do_select", "poll_schedule_timeout"))

        def send():
            blocked.wait(WATCHDOG)
            deadline = time.monotonic() + WATCHDOG
            while not waiting() and time.monotonic() < deadline:
                time.sleep(0.01)
            os.kill(os.getpid(), signal.SIGTERM)
            # Only if the read went on waiting: end it with data.
            if not done.wait(WATCHDOG):
                watchdog.append("the read did not end")
                os.write(write_end, b"[]")

        # Started first: it inherits a mask without SIGTERM blocked.
        sender = threading.Thread(target=send)
        sender.start()
        try:
            with interrupts.handled():
                mask = signal.pthread_sigmask(signal.SIG_BLOCK,
                                              {signal.SIGTERM})
                try:
                    blocked.set()
                    self.assertRaises(interrupts.Interrupted,
                                      files.read_text,
                                      "/proc/self/fd/%d" % read_end)
                finally:
                    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        finally:
            blocked.set()
            done.set()
            sender.join()
        self.assertEqual([], watchdog)
        self.assertIsNone(files.signal_fd)
