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

"""Options are registered in the places the contributor guide names.

"Where options are registered" in ``doc/source/contributor/drivers.rst``:
where the allocator is built, in the driver's constructor, and
``drivers.commands.register_opts`` for programs that read the options of
drivers they have not built. The calls are found in the source with :mod:`ast`.
"""

import ast
import os

import fixtures

import murano_cidr
from murano_cidr.tests import base
from murano_cidr.tests.unit import test_import_cycles

#: The calls that register options on a configuration object.
REGISTERING = frozenset({
    "register_opt", "register_opts", "register_group", "register_cli_opt",
    "register_cli_opts", "register_common_opts", "register_listed",
    "register_options", "register_cli_options", "register_logging"})

#: Where they may be called: (module, function).
SITES = frozenset({
    # Where the allocator is built.
    ("murano_cidr.engine.allocator", "driver_class"),
    ("murano_cidr.operator.drivers.commands", "prepare"),
    # The driver's constructor, through its class's hook.
    ("murano_cidr.engine.drivers.base", "__init__"),
    ("murano_cidr.engine.drivers.base", "register_opts"),
    # The registration helpers themselves.
    ("murano_cidr.opts", "register_common_opts"),
    ("murano_cidr.operator.drivers.commands", "register_opts"),
    ("murano_cidr.operator.drivers.commands", "set_command_defaults"),
    ("murano_cidr.opts", "register_listed"),
    # Every installed driver's, for programs that build none.
    ("murano_cidr.operator.confutils", "load"),
    ("murano_cidr.operator.confutils", "make_conf"),
    ("murano_cidr.engine.integration.plugin", "_install"),
    # The console scripts: theirs (logging, command line) and everyone's.
    ("murano_cidr.operator.cmd.common", "register_logging"),
    ("murano_cidr.operator.cmd.common", "main"),
    ("murano_cidr.operator.cmd.status", "main"),
    ("murano_cidr.operator.cmd.status", "_run"),
})


def registering_calls(name, path):
    """Return the ``(module, function)`` of every registering call.

    A call at module level is reported with the function ``None``.
    """
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    found = set()

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child.name)
                continue
            if isinstance(child, ast.Call):
                func = child.func
                called = (func.attr if isinstance(func, ast.Attribute)
                          else getattr(func, "id", None))
                if called in REGISTERING:
                    found.add((name, function))
            visit(child, function)

    visit(tree, None)
    return found


class TestRegistrationSites(base.TestCase):

    def test_options_are_registered_in_the_documented_places(self):
        modules = test_import_cycles.source_modules(
            os.path.dirname(murano_cidr.__file__))
        found = set()
        for name, path in modules.items():
            if not any(name.startswith(p + ".")
                       for p in test_import_cycles.OUTSIDE_RUNTIME):
                found |= registering_calls(name, path)
        self.assertIn(("murano_cidr.engine.drivers.base", "__init__"), found)
        self.assertEqual([], sorted(found - SITES, key=str))

    def test_a_call_is_found_inside_nested_code(self):
        path = self.useFixture(fixtures.TempDir()).join("m.py")
        with open(path, "w") as f:
            f.write("def outer(conf):\n"
                    "    if conf:\n"
                    "        for x in ():\n"
                    "            conf.register_opts(x)\n"
                    "lock_options.register_opts(CONF)\n")
        self.assertEqual({("m", "outer"), ("m", None)},
                         registering_calls("m", path))
