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

"""The progress bar of simulate and bench, read from what it draws."""

import io
from unittest import mock

from murano_cidr.measuring import progress
from murano_cidr.tests import base


class Tty(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self):
        return True


class TestProgress(base.TestCase):

    def test_nothing_drawn_when_not_a_terminal(self):
        stream = io.StringIO()
        with progress.progress(10, stream=stream, delay=0) as step:
            step.started()
            step()
        self.assertEqual("", stream.getvalue())
        self.assertEqual(1, step.done)

    def test_nothing_drawn_when_quiet(self):
        stream = Tty()
        with progress.progress(10, quiet=True, stream=stream,
                               delay=0) as step:
            step.started()
            step()
        self.assertEqual("", stream.getvalue())

    def test_quiet_needs_no_tqdm(self):
        with mock.patch.dict("sys.modules", {"tqdm": None}):
            with progress.progress(10, quiet=True, stream=Tty()) as step:
                step.started()
                step()
        self.assertEqual(1, step.done)

    def test_counts_on_a_terminal(self):
        stream = Tty()
        with progress.progress(10, stream=stream, delay=0, interval=0,
                               description="trials") as step:
            step.started()
            step()
            step()
            self.assertIn("2/10", stream.getvalue())
            self.assertIn("trials", stream.getvalue())

    def test_no_bar_and_no_estimate_before_started(self):
        # Spawning engines takes seconds no trial takes: the bar, its rate
        # and its ETA begin when the engines have started.
        stream = Tty()
        with progress.progress(10, stream=stream, delay=0) as step:
            self.assertEqual("", stream.getvalue())
            step.started()
            self.assertIn("0/10", stream.getvalue())


class TestCount(base.TestCase):

    def test_redrawn_at_most_once_an_interval_then_wiped(self):
        now = [100.0]
        stream = Tty()
        count = progress.Count(3000000, stream, "bytes read",
                               clock=lambda: now[0])
        count.advance(1000)
        count.advance(1000)
        now[0] += 0.99
        count.advance(1000)
        now[0] += 0.01
        count.advance(1500000)
        count.close()
        self.assertEqual(
            "\r1.0k of 3.0M bytes read (0%)"
            "\r1.5M of 3.0M bytes read (50%)"
            "\r" + " " * 29 + "\r", stream.getvalue())
        self.assertEqual(1503000, count.done)

    def test_unknown_total(self):
        stream = Tty()
        count = progress.Count(None, stream, "rows written")
        count.advance(12)
        self.assertEqual("\r12 rows written", stream.getvalue())
