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

from murano_cidr import tools
from murano_cidr.tools.simulate import stats


def pyplot():
    """Return matplotlib's pyplot on a file-only backend.

    :raises murano_cidr.exceptions.MissingExtra: if matplotlib (the
        ``simulate`` extra) is not installed.
    """
    tools.require("murano-cidr simulate --plot", "simulate", "matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    return plt


def plot(results, path):
    """Draw collision probability against K per driver, into a PNG file.

    Each driver is a line with its 95 % interval as error bars; the
    birthday bound is drawn dashed for every pool size measured.

    :param results: a list of results.
    :param path: the PNG file to write.
    :raises murano_cidr.exceptions.MissingExtra: if matplotlib (the
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
