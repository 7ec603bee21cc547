#!/usr/bin/env python3
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

"""Turn requirements.txt into pip constraints pinned at the lower bounds.

The ``floor`` tox environment installs exactly these versions and runs the
unit tests, so every lower bound requirements.txt declares is proven, never
guessed. The constraints are generated on every run, so they cannot drift
from requirements.txt.

Every requirement must have exactly one ``>=`` lower bound; anything else
(no bound, ``==``, ``~=``, a URL) is an error, so a new dependency cannot
join without a floor the job can check.

Usage: floor-constraints.py [requirements.txt] [-o constraints.txt]
"""

import argparse
import re
import sys

# name, optional [extras], then the specifiers, then an optional marker.
_REQUIREMENT = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*"
    r"(?P<specs>[^;]*?)\s*(?P<marker>;.*)?$")
_SPEC = re.compile(r"^(?P<op>===|==|>=|<=|~=|!=|<|>)\s*(?P<version>\S+)$")


class FloorError(Exception):
    """A requirement line that has no usable lower bound."""


def floor_of(line):
    """Return ``name==version`` for one requirements line, or None.

    :param line: a line of a requirements file.
    :returns: the pin, with the line's environment marker if any; None for
        a blank or comment line.
    :raises FloorError: if the requirement has no single ``>=`` bound.
    """
    text = line.split("#", 1)[0].strip()
    if not text:
        return None
    match = _REQUIREMENT.match(text)
    if not match:
        raise FloorError("cannot parse requirement %r" % text)
    lower = []
    for spec in filter(None, (s.strip() for s in
                              match.group("specs").split(","))):
        spec_match = _SPEC.match(spec)
        if not spec_match:
            raise FloorError("cannot parse %r in %r" % (spec, text))
        if spec_match.group("op") == ">=":
            lower.append(spec_match.group("version"))
        elif spec_match.group("op") not in ("!=", "<"):
            raise FloorError("%r must declare its floor with '>=', not %r"
                             % (text, spec_match.group("op")))
    if len(lower) != 1:
        raise FloorError("%r must have exactly one '>=' lower bound"
                         % text)
    pin = "%s==%s" % (match.group("name"), lower[0])
    if match.group("marker"):
        pin += match.group("marker")
    return pin


def floors(lines):
    """Return the pins of every requirement in ``lines``.

    :raises FloorError: for the first requirement without a floor.
    """
    return [pin for pin in map(floor_of, lines) if pin is not None]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("requirements", nargs="?",
                        default="requirements.txt")
    parser.add_argument("-o", "--output", default="-",
                        help="where to write the constraints (default: "
                        "standard output)")
    args = parser.parse_args(argv)
    try:
        with open(args.requirements) as f:
            pins = floors(f)
    except (OSError, FloorError) as e:
        print("floor-constraints: %s" % e, file=sys.stderr)
        return 1
    text = "".join(pin + "\n" for pin in pins)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
