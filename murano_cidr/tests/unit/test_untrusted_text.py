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

"""Text from callers and files reaches messages and logs escaped.

A CIDR read from ``taken``, an import file or Neutron's listings may hold
newlines and terminal escapes; an error quoting it must not let them forge
log lines or repaint an operator's terminal.
"""

import json
import os

from murano_cidr.engine import pool
from murano_cidr.engine import taken
from murano_cidr import exceptions
from murano_cidr import messages
from murano_cidr.operator.cmd import cli
from murano_cidr.operator.cmd import status
from murano_cidr.operator.operations import importing
from murano_cidr.operator.operations import openstack_export
from murano_cidr.tests import base

#: A value that would forge a log line and turn a terminal red.
HOSTILE = "10.0.0.0/24\n2026-12-01 ERROR forged line \x1b[31m"


class TestEscaped(base.TestCase):

    def assertEscaped(self, text):
        self.assertTrue(text.isprintable(), repr(text))
        self.assertIn("\\n", text)
        self.assertIn("\\x1b", text)

    def test_invalid_cidr_in_taken(self):
        e = self.assertRaises(exceptions.InvalidCidr, taken.parse_cidr,
                              HOSTILE)
        self.assertEscaped(str(e))
        e = self.assertRaises(exceptions.InvalidCidr,
                              taken.TakenSet.from_taken, [HOSTILE], 4)
        self.assertEscaped(str(e))

    def test_invalid_cidr_given_to_a_pool(self):
        p = pool.Pool.from_cidrs(["10.0.0.0/16"], 24)
        e = self.assertRaises(exceptions.InvalidCidr, p.contains, HOSTILE)
        self.assertEscaped(str(e))

    def test_invalid_pool_option(self):
        e = self.assertRaises(exceptions.InvalidConfig,
                              pool.Pool.from_cidrs, [HOSTILE], 24)
        self.assertEscaped(str(e))
        e = self.assertRaises(exceptions.InvalidConfig,
                              pool.Pool.from_murano, HOSTILE)
        self.assertEscaped(str(e))

    def test_import_file_row(self):
        path = os.path.join(self.state_path, "import.json")
        with open(path, "w") as f:
            json.dump([{"owner": "net-1", "cidr": HOSTILE}], f)
        pools = pool.pools_from_conf(self.conf)
        rows = importing.read_file(path, pools)
        self.assertEqual(importing.INVALID, rows[0].status)
        self.assertEscaped(rows[0].reason)

    def test_openstack_listing(self):
        directory = self.state_path
        subnets = os.path.join(directory, "subnets.json")
        with open(subnets, "w") as f:
            json.dump([{"ID": "s-1", "Network": "net-1", "Subnet": HOSTILE}],
                      f)
        ports = os.path.join(directory, "ports")
        os.mkdir(ports)
        with open(os.path.join(ports, "router-1.json"), "w") as f:
            json.dump([{"Fixed IP Addresses": [
                {"subnet_id": "s-1", "ip_address": "10.0.0.1"}]}], f)
        pools = pool.pools_from_conf(self.conf)
        result = openstack_export.convert(subnets, ports, pools)
        reasons = [reason for _router, _subnet, reason in result.skipped]
        self.assertEqual(1, len(reasons), reasons)
        self.assertEscaped(reasons[0])


#: Terminal control sequences: a title change (OSC ... BEL), red text
#: (CSI), and a C1 CSI (U+009B) that some terminals read as ESC [.
CONTROL = "\x1b]0;pwned\x07\x1b[31m\x9b2J"


class TestEveryLineEscaped(base.TestCase):
    """Issue 32: an error line echoed a path or URL's control characters."""

    def assertPrintable(self, text):
        for line in text.splitlines():
            self.assertTrue(line.isprintable(), repr(line))
        self.assertIn("\\x1b]0;pwned\\x07\\x1b[31m\\x9b2J", text)

    def test_one_helper_escapes_c0_and_c1(self):
        self.assertEqual("a\\x1b[31m\\x07\\x9b\\x85b",
                         messages.printable("a\x1b[31m\x07\x9b\x85b"))
        self.assertEqual("caf\u00e9 \\x1b",
                         messages.one_line("caf\u00e9\n\x1b"))

    def test_a_missing_configuration_file(self):
        code, out, err = self.run_main(
            cli.main, "--config-file",
            os.path.join(self.state_path, "no" + CONTROL), "list")
        self.assertEqual(2, code, err)
        self.assertPrintable(err)

    def test_a_missing_import_file(self):
        conf = os.path.join(self.state_path, "r.conf")
        with open(conf, "w") as f:
            f.write("[cidr_allocator]\ndriver = db\n"
                    "[cidr_allocator_database]\nconnection = sqlite:///%s\n"
                    % os.path.join(self.state_path, "db.sqlite"))
        code, out, err = self.run_main(
            cli.main, "--config-file", conf, "import", "--dry-run",
            os.path.join(self.state_path, "rows" + CONTROL + ".json"))
        self.assertNotEqual(0, code, err)
        self.assertPrintable(err)

    def test_the_verbose_line_naming_the_files(self):
        conf = os.path.join(self.state_path, "r" + CONTROL + ".conf")
        with open(conf, "w") as f:
            f.write("[cidr_allocator]\ndriver = random\n")
        code, out, err = self.run_main(cli.main, "--config-file", conf,
                                       "--verbose", "allocate", "x")
        self.assertEqual(0, code, err)
        self.assertIn("Configuration: ", err)
        # NOTE: the oslo.log of older branches (Wallaby's 4.4.0, seen in
        # floor-wallaby) ends each line it writes to stderr with a colour
        # reset of its own (ESC [00m); what the line echoes must be
        # escaped all the same.
        self.assertIn("\\x1b]0;pwned\\x07\\x1b[31m\\x9b2J", err)
        for raw in ("\x1b]", "\x07", "\x1b[31m", "\x9b"):
            self.assertNotIn(raw, err)

    def test_an_upgrade_check_detail(self):
        conf = os.path.join(self.state_path, "db.conf")
        with open(conf, "w") as f:
            f.write("[cidr_allocator]\ndriver = db\n"
                    "[cidr_allocator_database]\nconnection = sqlite:///%s\n"
                    % os.path.join(self.state_path, "no" + CONTROL,
                                   "db.sqlite"))
        code, out, err = self.run_main(status.main, "--config-file", conf,
                                       "upgrade", "check")
        self.assertNotEqual(0, code, out + err)
        self.assertPrintable(out)
