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

"""The documentation's commands are shell, and it links the release notes."""

import glob
import os
import re

import murano_cidr
from murano_cidr.operator.drivers import commands
from murano_cidr import opts
from murano_cidr.tests import base

REPO = os.path.dirname(os.path.dirname(os.path.abspath(murano_cidr.__file__)))
DOCS = os.path.join(REPO, "doc", "source")

#: How a shell command starts in our documentation.
COMMAND = re.compile(r"(murano-cidr|pip |tox |sudo |bash |export |python3 |"
                     r"MURANO_CIDR_)")


def literal_blocks(text):
    """Yield the first line of each ``::`` literal block of a reST text."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.rstrip().endswith("::") or line.lstrip().startswith(".."):
            continue
        for following in lines[i + 1:]:
            if following.strip():
                if len(following) - len(following.lstrip()) > (
                        len(line) - len(line.lstrip())):
                    yield following.strip()
                break


class TestDocs(base.TestCase):

    def pages(self):
        paths = sorted(glob.glob(os.path.join(DOCS, "**", "*.rst"),
                                 recursive=True))
        self.assertNotEqual([], paths)
        for path in paths:
            with open(path) as f:
                yield os.path.relpath(path, REPO), f.read()

    def test_commands_are_console_blocks(self):
        # A :: block is highlighted as Python by default; commands go in
        # ".. code-block:: console".
        found = [(path, first) for path, text in self.pages()
                 for first in literal_blocks(text) if COMMAND.match(first)]
        self.assertEqual([], found)

    def test_literal_blocks_are_not_python(self):
        with open(os.path.join(DOCS, "conf.py")) as f:
            self.assertIn('highlight_language = "none"', f.read())

    def test_the_tools_default_driver_is_the_one_documented(self):
        # Issue 32: operations.rst said it was random; it is db.
        with open(os.path.join(DOCS, "admin", "operations.rst")) as f:
            text = " ".join(f.read().split())
        documented = re.search(r"A command that finds none of these files "
                               r"runs on the defaults: the ``(\w+)`` driver",
                               text)
        self.assertIsNotNone(documented)
        commands.set_command_defaults(self.conf)
        self.assertEqual(self.conf[opts.GROUP].driver, documented.group(1))

    def test_index_links_the_release_notes(self):
        with open(os.path.join(DOCS, "index.rst")) as f:
            self.assertIn("release notes", f.read())

    def test_the_check_finds_a_command_block(self):
        self.assertEqual(["murano-cidr list"], list(literal_blocks(
            "Run::\n\n  murano-cidr list\n\n.. code-block:: console\n\n"
            "  $ tox\n")))
