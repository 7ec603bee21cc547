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

"""The declared lower bounds are the oldest supported branch's pins.

The ``floor-ussuri`` tox environment installs Ussuri's upper-constraints
(``tools/constraints/ussuri.txt``); a lower bound of requirements.txt below
Ussuri's pin would never be installed by any job, and one above it would
not install on Ussuri, so every bound the branch pins must be exactly its
pin.
"""

import configparser
import os
import re

from packaging import version

from murano_cidr.tests import base

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..",
                                    ".."))
OLDEST = os.path.join(ROOT, "tools", "constraints", "ussuri.txt")

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?"
                   r"\s*([^;#]*)")


def normalise(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_lines(text):
    """Return the requirement strings of a requirements-style text."""
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return [line for line in lines if line]


def lower_bound(requirement):
    """Return ``(name, [versions of its '>=' specifiers])``."""
    match = _NAME.match(requirement)
    specs = [s.strip() for s in match.group(2).split(",") if s.strip()]
    return (normalise(match.group(1)),
            [s[2:].strip() for s in specs if s.startswith(">=")])


def read_pins(path):
    """Return ``{name: version}`` of a constraints file (``name===v``)."""
    with open(path) as f:
        lines = requirement_lines(f.read())
    return {normalise(name): version
            for name, version in (line.split("===", 1) for line in lines)}


class TestDeclaredFloors(base.TestCase):

    def setUp(self):
        super().setUp()
        if not os.path.exists(OLDEST):
            self.skipTest("not run from a source tree")
        self.pins = read_pins(OLDEST)

    def _requirements(self):
        with open(os.path.join(ROOT, "requirements.txt")) as f:
            return requirement_lines(f.read())

    def _extras(self):
        setup = configparser.ConfigParser()
        setup.read(os.path.join(ROOT, "setup.cfg"))
        return [requirement for extra in setup["extras"].values()
                for requirement in requirement_lines(extra)]

    def test_every_requirement_has_one_lower_bound(self):
        for requirement in self._requirements() + self._extras():
            name, floors = lower_bound(requirement)
            self.assertEqual(1, len(floors), requirement)

    def test_floors_are_the_oldest_branch_pins(self):
        wrong = {}
        for requirement in self._requirements():
            name, floors = lower_bound(requirement)
            if name in self.pins and floors != [self.pins[name]]:
                wrong[name] = (floors, self.pins[name])
        self.assertEqual({}, wrong)

    def test_extras_install_on_the_oldest_branch(self):
        # An extra may ask for less than the branch pins (the branch's pin
        # is what gets installed), never more.
        above = {}
        for requirement in self._extras():
            name, floors = lower_bound(requirement)
            if name in self.pins and (version.Version(floors[0])
                                      > version.Version(self.pins[name])):
                above[name] = (floors, self.pins[name])
        self.assertEqual({}, above)
