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


"""The PNG plot of a simulation: P(collision) against K, per driver.

matplotlib comes with the ``simulate`` extra and is imported only here,
when a plot is asked for.
"""

from murano_cidr import measuring
from murano_cidr.measuring.simulate import stats


#: One look per driver, in order, so lines that coincide (db and lock
#: both at zero) stay apart: marker, line style, and a small shift in K.
STYLES = (("o", "-"), ("s", "--"), ("^", "-."), ("D", ":"), ("v", "-"),
          ("P", "--"))
#: The shift between two drivers, as a share of the range of K.
SHIFT = 0.02


def pyplot():
    """Return matplotlib's pyplot on a file-only backend.

    :raises murano_cidr.operator.errors.MissingExtra: if matplotlib (the
        ``simulate`` extra) is not installed.
    """
    measuring.require("murano-cidr simulate --plot", "simulate", "matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    return plt


def title(results, spec=None):
    """Return the plot's title: what was measured, and how.

    :param results: a list of
        :class:`~murano_cidr.measuring.simulate.model.Result`.
    :param spec: the :class:`~murano_cidr.measuring.simulate.model.Spec` run.
    :returns: one or two lines naming the pool, the trials and the seed.
    """
    sizes = sorted({r.pool_size for r in results})
    existing = sorted({r.existing for r in results})
    pool = "pool of %s subnets" % "/".join(str(s) for s in sizes)
    if any(existing):
        pool += ", %s already taken" % "/".join(str(e) for e in existing)
    parts = [pool]
    if spec is not None:
        parts.append("%d trials per point" % spec.trials)
        parts.append("seed %s" % ("none" if spec.seed is None
                                  else spec.seed))
    return "Collisions of concurrent deployments\n" + ", ".join(parts)


def y_limit(results):
    """Return the top of the y axis: just above the highest point drawn.

    :param results: the results drawn, with their intervals and bounds.
    :returns: a probability in (0, 1.05].
    """
    highest = 0.0
    for r in results:
        highest = max(highest, r.birthday)
        if r.completed:
            highest = max(highest, r.interval[1])
    return min(1.05, max(0.05, highest * 1.1))


def draw(results, spec=None):
    """Draw collision probability against K per driver.

    Each driver is a line of its own marker and style with its 95 %
    interval as error bars, shifted a little along K so drivers measured
    at the same values (no collision at all) do not hide each other; the
    birthday bound is drawn thin and grey for every pool size measured.
    The y axis ends just above the highest point or bound.

    :param results: a list of results.
    :param spec: the spec that was run, for the title.
    :returns: the matplotlib figure; :func:`plot` saves and closes it.
    :raises murano_cidr.operator.errors.MissingExtra: if matplotlib (the
        ``simulate`` extra) is not installed.
    """
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(7, 4.5))
    drivers = []
    for r in results:
        if r.driver not in drivers:
            drivers.append(r.driver)
    ks = [r.k for r in results]
    step = SHIFT * max(1, max(ks) - min(ks))
    middle = (len(drivers) - 1) / 2.0
    for index, name in enumerate(drivers):
        # NOTE: a K at which every trial failed has no probability.
        rows = sorted((r for r in results
                       if r.driver == name and r.completed),
                      key=lambda r: r.k)
        if not rows:
            continue
        marker, linestyle = STYLES[index % len(STYLES)]
        shift = (index - middle) * step
        xs = [r.k + shift for r in rows]
        ps = [r.probability for r in rows]
        errors = [[r.probability - r.interval[0] for r in rows],
                  [r.interval[1] - r.probability for r in rows]]
        axes.errorbar(xs, ps, yerr=errors, marker=marker,
                      linestyle=linestyle, capsize=3, label=name)
    curve_ks = list(range(min(ks), max(ks) + 1))
    for free in sorted({r.free for r in results}):
        axes.plot(curve_ks,
                  [stats.birthday_bound(k, free) for k in curve_ks],
                  linestyle="-", color="0.55", linewidth=1,
                  label="birthday bound, %d free" % free)
    axes.set_title(title(results, spec), fontsize=10)
    axes.set_xlabel("concurrent deployments (K)")
    axes.set_ylabel("P(at least one collision)")
    axes.set_xticks(sorted(set(ks)))
    top = y_limit(results)
    # NOTE: below zero a little, so lines at zero stay off the axis.
    axes.set_ylim(-0.03 * top, top)
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    return figure


def plot(results, path, spec=None):
    """Draw the results (see :func:`draw`) into a PNG file.

    :param results: a list of results.
    :param path: the PNG file to write.
    :param spec: the spec that was run, for the title.
    :raises murano_cidr.operator.errors.MissingExtra: if matplotlib (the
        ``simulate`` extra) is not installed.
    """
    plt = pyplot()
    figure = draw(results, spec)
    try:
        figure.savefig(path, format="png")
    finally:
        plt.close(figure)
