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

"""The progress bar ``simulate`` and ``bench`` draw on standard error.

tqdm is imported only when a bar is drawn: ``--quiet`` runs, and runs whose
standard error is not a terminal, work without the ``simulate`` or
``bench`` extra. ``import`` draws a :class:`Count` instead when tqdm is not
installed: it is an operator's command, which no extra should be needed
for.
"""

import contextlib
import sys
import time


class Progress(object):
    """Count steps, and draw them once :meth:`started` was called.

    The bar (and so its rate and ETA) starts at :meth:`started`, not when
    the object is made: spawning engines and creating schemas take seconds
    that no step takes, and would make the first estimates wrong.

    :param total: the number of steps.
    :param stream: where to draw, or None to draw nothing.
    :param description: what the steps are (``trials``).
    :param delay: seconds before the bar first shows (tqdm's ``delay``).
    :param interval: least seconds between two redraws.
    """

    def __init__(self, total, stream=None, description="trials", delay=1.0,
                 interval=0.1, unit_scale=False):
        self.total = total
        self._unit_scale = unit_scale
        self.done = 0
        self._stream = stream
        self._description = description
        self._delay = delay
        self._interval = interval
        self._bar = None

    def started(self):
        """Start the bar's clock: the work whose steps are counted begins."""
        if self._stream is None or self._bar is not None:
            return
        import tqdm
        self._bar = tqdm.tqdm(total=self.total, initial=self.done,
                              file=self._stream,
                              unit=" " + self._description,
                              delay=self._delay, mininterval=self._interval,
                              unit_scale=self._unit_scale, leave=False)

    def __call__(self):
        """Count one step done (and start the bar if it was not)."""
        self.advance(1)

    def advance(self, steps):
        """Count ``steps`` steps done (and start the bar if it was not)."""
        self.done += steps
        if self._bar is None:
            self.started()
        else:
            self._bar.update(steps)

    def close(self):
        """Remove the bar from the terminal."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _scaled(number):
    for factor, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if number >= factor:
            return "%.1f%s" % (number / factor, suffix)
    return "%d" % number


class Count(object):
    """A count on one line of a terminal: the bar without tqdm.

    Redrawn in place (a carriage return) at most once per ``interval``,
    and wiped at :meth:`close`.

    :param total: the number of steps, or None if unknown.
    :param stream: the terminal.
    :param description: what the steps are (``bytes read``).
    :param interval: least seconds between two redraws.
    :param clock: returns seconds; :func:`time.monotonic` by default.
    """

    def __init__(self, total, stream, description, interval=1.0,
                 clock=time.monotonic):
        self.total = total
        self.done = 0
        self._stream = stream
        self._description = description
        self._interval = interval
        self._clock = clock
        self._shown = None
        self._width = 0

    def advance(self, steps):
        """Count ``steps`` steps done; redraw if ``interval`` has passed."""
        self.done += steps
        now = self._clock()
        if self._shown is None or now - self._shown >= self._interval:
            self._shown = now
            text = "%s %s" % (_scaled(self.done), self._description)
            if self.total:
                text = "%s of %s %s (%d%%)" % (
                    _scaled(self.done), _scaled(self.total),
                    self._description, 100 * self.done // self.total)
            self._draw(text)

    def _draw(self, text):
        self._stream.write("\r%s" % text.ljust(self._width))
        self._stream.flush()
        self._width = max(self._width, len(text))

    def close(self):
        """Wipe the line."""
        if self._width:
            self._draw("")
            self._stream.write("\r")
            self._stream.flush()
            self._width = 0


def wanted(quiet=False, stream=None):
    """Tell whether a bar would be drawn.

    :param quiet: the command's ``--quiet``.
    :param stream: where it would be drawn (standard error by default).
    :returns: True unless quiet or the stream is not a terminal.
    """
    stream = sys.stderr if stream is None else stream
    return not quiet and getattr(stream, "isatty", lambda: False)()


@contextlib.contextmanager
def progress(total, quiet=False, stream=None, description="trials",
             delay=1.0, interval=0.1, unit_scale=False):
    """Show a progress bar on standard error for runs longer than ``delay``.

    Nothing is shown with ``quiet`` or when the stream is not a terminal.

    :param total: the number of steps.
    :param quiet: never show the bar.
    :param stream: where to draw it (standard error by default).
    :param description: what the steps are.
    :param delay: seconds before the bar first shows.
    :param interval: least seconds between two redraws.
    :param unit_scale: show large counts as 1.5M (tqdm's ``unit_scale``).
    :returns: a context manager yielding a :class:`Progress`: call it
        once a step, and call its ``started()`` when the counted work
        begins.
    """
    stream = sys.stderr if stream is None else stream
    bar = Progress(total, stream if wanted(quiet, stream) else None,
                   description, delay, interval, unit_scale)
    try:
        yield bar
    finally:
        bar.close()
