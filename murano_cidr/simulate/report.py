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

"""How simulation results are shown: a table, JSON, CSV, a PNG plot.

Also the progress bar, since it shares the terminal with the table.
"""

import contextlib
import csv
import io
import json
import sys

from oslo_log import log as logging
import tqdm

from murano_cidr import exceptions
from murano_cidr.simulate import stats

LOG = logging.getLogger(__name__)

FORMATS = ("table", "json", "csv")

#: The columns of the CSV output, in order.
CSV_FIELDS = ("driver", "k", "trials", "completed", "pool_size", "existing",
              "free", "collided", "refused", "errors", "probability",
              "ci95_low", "ci95_high", "birthday_bound")


def _percent(value):
    return "n/a" if value is None else "%.1f%%" % (100.0 * value)


def table(results):
    """Return the results as an aligned, human-readable table.

    Failed trials are counted under ERRORS and left out of P(COLLISION)
    and its interval ("n/a" when no trial completed).

    :param results: a list of :class:`~murano_cidr.simulate.runner.Result`.
    :returns: the table as a string, one row per driver and K.
    """
    rows = [("DRIVER", "K", "TRIALS", "FREE", "COLLIDED", "P(COLLISION)",
             "95% CI (WILSON)", "BIRTHDAY BOUND", "ERRORS")]
    for r in results:
        low, high = r.interval
        rows.append((r.driver, str(r.k), str(r.trials),
                     "%d/%d" % (r.free, r.pool_size), str(r.collided),
                     _percent(r.probability),
                     ("n/a" if low is None
                      else "%s - %s" % (_percent(low), _percent(high))),
                     _percent(r.birthday), str(r.errors)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(v.rjust(w) if i else v.ljust(w)
                       for i, (v, w) in enumerate(zip(row, widths)))
             for row in rows]
    notes = ["%s, K=%d: %d trial(s) failed; first error: %s"
             % (r.driver, r.k, r.errors, r.first_error)
             for r in results if r.errors]
    return "\n".join(lines + notes)


def to_json(results, spec=None):
    """Return the results as a JSON document.

    :param results: a list of results.
    :param spec: the :class:`~murano_cidr.simulate.runner.Spec`, recorded
        beside them so the numbers say how they were made.
    """
    doc = {"results": [r.to_dict() for r in results]}
    if spec is not None:
        doc["spec"] = {"drivers": spec.drivers, "ks": spec.ks,
                       "trials": spec.trials, "pool": spec.pool,
                       "existing": spec.existing, "seed": spec.seed}
    return json.dumps(doc, indent=2, sort_keys=True)


def to_csv(results):
    """Return the results as CSV with a header row (:data:`CSV_FIELDS`)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS,
                            extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for r in results:
        writer.writerow(r.to_dict())
    return out.getvalue()


def render(results, fmt, spec=None):
    """Return the results in one of :data:`FORMATS`."""
    if fmt == "json":
        return to_json(results, spec)
    if fmt == "csv":
        return to_csv(results).rstrip("\n")
    return table(results)


def pyplot():
    """Return matplotlib's pyplot on a file-only backend.

    :raises murano_cidr.exceptions.NotSupported: if matplotlib (the
        ``simulate`` extra) is not installed.
    """
    try:
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib import pyplot as plt
    except ImportError:
        raise exceptions.NotSupported(
            message="cannot draw a plot: matplotlib is not installed; run "
            "'pip install murano-cidr[simulate]'")
    return plt


def plot(results, path):
    """Draw collision probability against K per driver, into a PNG file.

    Each driver is a line with its 95 % interval as error bars; the
    birthday bound is drawn dashed for every pool size measured.

    :param results: a list of results.
    :param path: the PNG file to write.
    :raises murano_cidr.exceptions.NotSupported: if matplotlib (the
        ``simulate`` extra) is not installed.
    """
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(7, 4.5))
    drivers = []
    for r in results:
        if r.driver not in drivers:
            drivers.append(r.driver)
    for name in drivers:
        # NOTE: a K at which every trial failed has no probability.
        rows = sorted((r for r in results
                       if r.driver == name and r.completed),
                      key=lambda r: r.k)
        if not rows:
            continue
        ks = [r.k for r in rows]
        ps = [r.probability for r in rows]
        errors = [[r.probability - r.interval[0] for r in rows],
                  [r.interval[1] - r.probability for r in rows]]
        axes.errorbar(ks, ps, yerr=errors, marker="o", capsize=3,
                      label=name)
    ks = [r.k for r in results]
    curve_ks = list(range(min(ks), max(ks) + 1))
    for free in sorted({r.free for r in results}):
        axes.plot(curve_ks,
                  [stats.birthday_bound(k, free) for k in curve_ks],
                  linestyle="--", color="grey",
                  label="birthday bound, %d free" % free)
    axes.set_xlabel("concurrent deployments (K)")
    axes.set_ylabel("P(at least one collision)")
    axes.set_ylim(-0.02, 1.02)
    axes.grid(True, alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, format="png")
    plt.close(figure)


class _Bar(object):
    def __init__(self, bar):
        self._bar = bar

    def __call__(self):
        if self._bar is not None:
            self._bar.update(1)


@contextlib.contextmanager
def progress(total, quiet=False, stream=None, description="trials"):
    """Show a progress bar on stderr for runs that last over a second.

    Nothing is shown with ``quiet`` or when the stream is not a terminal.

    :param total: the number of steps.
    :param quiet: never show the bar.
    :param stream: where to draw it (standard error by default).
    :param description: what the steps are.
    :returns: a context manager yielding a callable to call once a step.
    """
    stream = sys.stderr if stream is None else stream
    bar = None
    if not quiet and getattr(stream, "isatty", lambda: False)():
        bar = tqdm.tqdm(total=total, file=stream, unit=" " + description,
                        delay=1.0, leave=False)
    try:
        yield _Bar(bar)
    finally:
        if bar is not None:
            bar.close()
