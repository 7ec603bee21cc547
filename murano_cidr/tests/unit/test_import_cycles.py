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

"""The runtime package imports without a cycle.

The graph is read from the source with :mod:`ast`: every ``import`` of a
murano_cidr module, at module level or inside a function (a deferred import
that breaks a cycle at load time is still a cycle in the design).
"""

import ast
import os

import fixtures

import murano_cidr
from murano_cidr.tests import base

PACKAGE = "murano_cidr"

#: What is not the runtime package: the tests and the tools.
OUTSIDE_RUNTIME = ("murano_cidr.tests", "murano_cidr.measuring")


def source_modules(top):
    """Return every module under the package directory ``top``.

    :returns: a dictionary from dotted name to file path.
    """
    found = {}
    parent = os.path.dirname(top)
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for filename in filenames:
            if not filename.endswith(".py"):
                continue
            path = os.path.join(dirpath, filename)
            parts = os.path.relpath(path, parent)[:-3].split(os.sep)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imported(name, path, known):
    """Return the modules of ``known`` that the module ``name`` imports.

    ``from package import name`` counts as an import of the module
    ``package.name`` when there is one, else of ``package``.
    """
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    package = name if path.endswith("__init__.py") else name.rpartition(
        ".")[0]
    targets = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = parts[:len(parts) - node.level + 1]
                source = ".".join(anchor + ([source] if source else []))
            for alias in node.names:
                full = "%s.%s" % (source, alias.name)
                targets.add(full if full in known else source)
    return targets & set(known)


def import_graph(modules):
    """Return ``{module: set of modules it imports}`` among ``modules``."""
    return {name: imported(name, path, modules) & set(modules)
            for name, path in modules.items()}


def find_cycles(graph):
    """Return one import cycle per strongly connected group of modules.

    :returns: a sorted list of cycles, each a list of module names that
        starts and ends with the same module.
    """
    cycles = []
    done = set()
    for start in sorted(graph):
        if start in done:
            continue
        # Depth-first, iteratively; a back edge closes a cycle.
        path, on_path = [start], {start}
        stack = [iter(sorted(graph[start]))]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                finished = path.pop()
                on_path.discard(finished)
                done.add(finished)
                continue
            if nxt in on_path:
                cycles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in done:
                path.append(nxt)
                on_path.add(nxt)
                stack.append(iter(sorted(graph[nxt])))
    return sorted(cycles)


class TestImportCycles(base.TestCase):

    def test_runtime_package_has_no_import_cycle(self):
        modules = {
            name: path
            for name, path in source_modules(
                os.path.dirname(murano_cidr.__file__)).items()
            if not any(name == p or name.startswith(p + ".")
                       for p in OUTSIDE_RUNTIME)}
        self.assertIn("murano_cidr.engine.drivers.base", modules)
        cycles = find_cycles(import_graph(modules))
        self.assertEqual([], [" -> ".join(cycle) for cycle in cycles])

    def test_a_cycle_is_found(self):
        # The finder itself: a cycle through three modules, a self-import,
        # and a diamond that is no cycle.
        graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d"},
                 "e": {"f", "g"}, "f": {"h"}, "g": {"h"}, "h": set()}
        self.assertEqual([["a", "b", "c", "a"], ["d", "d"]],
                         find_cycles(graph))

    def test_from_import_of_a_name_is_an_import_of_its_module(self):
        known = {"murano_cidr.opts": None, "murano_cidr.engine.drivers": None,
                 "murano_cidr.engine.drivers.base": None}
        path = self.useFixture(fixtures.TempDir()).join("m.py")
        with open(path, "w") as f:
            f.write("import os\n"
                    "from murano_cidr.engine.drivers import base\n"
                    "from murano_cidr.engine.drivers import NAMESPACE\n"
                    "def later():\n"
                    "    from murano_cidr import opts\n")
        self.assertEqual(
            {"murano_cidr.engine.drivers.base", "murano_cidr.engine.drivers",
             "murano_cidr.opts"},
            imported("murano_cidr.m", path, known))
