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

"""A service that installs the library loads nothing it does not use.

Each check runs in a fresh interpreter, so what other tests imported does
not count.
"""

import json
import subprocess
import sys
import textwrap

from murano_cidr.tests import base

#: The packages of the library a service imports.
RUNTIME_PACKAGES = ("murano_cidr.drivers", "murano_cidr.integration",
                    "murano_cidr.operations")
RUNTIME_MODULES = ("murano_cidr", "murano_cidr.allocator",
                   "murano_cidr.exceptions", "murano_cidr.opts",
                   "murano_cidr.pool", "murano_cidr.taken")

#: What only the tools and their extras bring.
TOOL_LIBRARIES = ("tqdm", "matplotlib")
TOOL_PACKAGES = ("murano_cidr.measuring",)


def loaded_after(code):
    """Run ``code`` in a new interpreter; return the modules it loaded.

    :param code: Python statements.
    :returns: the names in ``sys.modules`` at the end.
    """
    script = textwrap.dedent(code) + textwrap.dedent("""
        import json, sys
        print(json.dumps(sorted(sys.modules)))
    """)
    out = subprocess.run([sys.executable, "-c", script], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def offenders(modules, names):
    """Return the modules that are, or are inside, one of ``names``."""
    return sorted(m for m in modules
                  if any(m == n or m.startswith(n + ".") for n in names))


class TestRuntimeImports(base.TestCase):

    def test_runtime_imports_no_tool(self):
        modules = loaded_after("""
            import importlib, pkgutil, tempfile
            for name in %r:
                importlib.import_module(name)
            for name in %r:
                package = importlib.import_module(name)
                for info in pkgutil.walk_packages(package.__path__,
                                                  name + "."):
                    importlib.import_module(info.name)
            from murano_cidr import allocator
            from murano_cidr import confutils
            for driver in allocator.installed_drivers():
                conf = confutils.make_conf({"cidr_allocator": {
                    "driver": driver, "state_path": tempfile.mkdtemp()}})
                allocator.get_allocator(conf).close()
        """ % (RUNTIME_MODULES, RUNTIME_PACKAGES))
        self.assertIn("murano_cidr.drivers.db.driver", modules)
        self.assertIn("murano_cidr.integration.murano", modules)
        self.assertEqual(
            [], offenders(modules, TOOL_LIBRARIES + TOOL_PACKAGES))

    def test_console_scripts_import_no_tool_library(self):
        # The commands' parsers know simulate and bench, but tqdm and
        # matplotlib load only when a run draws a bar or a plot.
        modules = loaded_after("""
            from murano_cidr.cmd import cli
            from murano_cidr.cmd import manage
            from murano_cidr.cmd import status
        """)
        self.assertEqual([], offenders(modules, TOOL_LIBRARIES))
