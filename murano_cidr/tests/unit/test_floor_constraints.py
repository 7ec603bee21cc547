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

"""tools/floor-constraints.py: the pins of the floor job."""

import importlib.util
import os

from murano_cidr.tests import base

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..",
                                    ".."))
TOOL = os.path.join(ROOT, "tools", "floor-constraints.py")


def load_tool():
    spec = importlib.util.spec_from_file_location("floor_constraints", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TestFloorConstraints(base.TestCase):

    def setUp(self):
        super().setUp()
        if not os.path.exists(TOOL):
            self.skipTest("not run from a source tree")
        self.tool = load_tool()

    def test_lower_bound_becomes_a_pin(self):
        self.assertEqual(
            ["oslo.db==15.0.0", "SQLAlchemy==1.4.51",
             "tooz==6.1.0", "pbr==6.0.0;python_version>='3.9'"],
            self.tool.floors([
                "# comment\n", "\n",
                "oslo.db>=15.0.0 # Apache-2.0\n",
                "SQLAlchemy>=1.4.51,!=2.0.0,<3 # MIT\n",
                "tooz[redis] >= 6.1.0\n",
                "pbr>=6.0.0;python_version>='3.9'\n"]))

    def test_requirement_without_a_floor_is_refused(self):
        for line in ("netaddr\n", "netaddr<2\n", "netaddr==1.0\n",
                     "netaddr~=1.0\n", "netaddr>=1.0,>=1.1\n",
                     "git+https://example.invalid/x.git\n"):
            self.assertRaises(self.tool.FloorError, self.tool.floors, [line])

    def test_every_requirement_has_a_floor(self):
        with open(os.path.join(ROOT, "requirements.txt")) as f:
            lines = f.readlines()
        pins = self.tool.floors(lines)
        self.assertEqual(
            len([line for line in lines
                 if line.split("#", 1)[0].strip()]), len(pins))
