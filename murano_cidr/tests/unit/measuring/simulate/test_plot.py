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


"""The simulation's PNG plot."""

import os
from unittest import mock

from murano_cidr.measuring.simulate import model
from murano_cidr.measuring.simulate import plot
from murano_cidr.operator import errors
from murano_cidr.tests import base
from murano_cidr.tests.unit.measuring.simulate import test_report


class TestPlot(base.TestCase):

    def test_plot_skips_rows_without_completed_trials(self):
        path = os.path.join(self.state_path, "p.png")
        failed = model.Result("lock", 2, 5, 32, 0, errors=5)
        plot.plot(test_report.results() + [failed], path)
        with open(path, "rb") as f:
            self.assertEqual(b"\x89PNG", f.read(4))

    def test_plot_writes_a_png(self):
        path = os.path.join(self.state_path, "p.png")
        plot.plot(test_report.results(), path)
        with open(path, "rb") as f:
            self.assertEqual(b"\x89PNG", f.read(4))

    def test_plot_without_matplotlib(self):
        with mock.patch.dict("sys.modules", {"matplotlib": None}):
            e = self.assertRaises(errors.MissingExtra, plot.pyplot)
        self.assertIn("'pip install murano-cidr[simulate]'", str(e))

    def never_colliding(self):
        return [model.Result(name, k, 500, 256, 0, collided=collided)
                for name, k, collided in (
                    ("random", 2, 1), ("random", 10, 90), ("db", 2, 0),
                    ("db", 10, 0), ("lock", 2, 0), ("lock", 10, 0))]

    def draw(self, results, spec=None):
        figure = plot.draw(results, spec)
        self.addCleanup(plot.pyplot().close, figure)
        return figure.axes[0]

    def test_title_names_pool_trials_and_seed(self):
        spec = model.Spec(drivers=["random", "db", "lock"], ks=[2, 10],
                          trials=500, seed=1502437)
        axes = self.draw(self.never_colliding(), spec)
        self.assertIn("pool of 256 subnets, 500 trials per point, seed "
                      "1502437", axes.get_title())

    def test_drivers_that_coincide_stay_apart(self):
        axes = self.draw(self.never_colliding())
        handles, labels = axes.get_legend_handles_labels()
        # Each driver is an errorbar container; its first line the data.
        lines = {label: handle.lines[0]
                 for handle, label in zip(handles, labels)
                 if label in ("random", "db", "lock")}
        self.assertEqual({"random", "db", "lock"}, set(lines))
        looks = {(line.get_marker(), line.get_linestyle())
                 for line in lines.values()}
        self.assertEqual(3, len(looks))
        # db and lock both measured 0 at K=2: drawn side by side.
        self.assertNotEqual(list(lines["db"].get_xdata()),
                            list(lines["lock"].get_xdata()))

    def test_y_axis_fits_the_points(self):
        axes = self.draw(self.never_colliding())
        top = axes.get_ylim()[1]
        highest = max(max(r.interval[1], r.birthday)
                      for r in self.never_colliding())
        self.assertGreater(top, highest)
        self.assertLess(top, 0.3)
