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

from murano_cidr import exceptions
from murano_cidr.tests import base
from murano_cidr.tests.unit.tools.simulate import test_report
from murano_cidr.tools.simulate import model
from murano_cidr.tools.simulate import plot


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
            e = self.assertRaises(exceptions.MissingExtra, plot.pyplot)
        self.assertIn("'pip install murano-cidr[simulate]'", str(e))
