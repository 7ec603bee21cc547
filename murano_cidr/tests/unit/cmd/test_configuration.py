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

"""The configuration an operator means: Murano's file, found unasked."""

import os

import fixtures

from murano_cidr.operator.cmd import cli
from murano_cidr.operator.cmd import configuration
from murano_cidr.operator.cmd import manage
from murano_cidr.operator.cmd import status
from murano_cidr.tests import base


class TestSearch(base.TestCase):
    """A host laid out as an engine host is, under a temporary root."""

    def setUp(self):
        super().setUp()
        self.root = self.useFixture(fixtures.TempDir()).path
        self.murano_conf = self.path("etc/murano/murano.conf")
        self.conf_d = self.path("etc/murano/murano.conf.d")
        self.useFixture(fixtures.MonkeyPatch(
            "murano_cidr.operator.cmd.configuration.SEARCH_FILES",
            (self.murano_conf, self.path("etc/murano-cidr/murano-cidr.conf"))))
        self.useFixture(fixtures.MonkeyPatch(
            "murano_cidr.operator.cmd.configuration.SEARCH_DIRS",
            (self.conf_d,)))
        self.database = os.path.join(self.state_path, "engine.sqlite")
        self.write(self.murano_conf,
                   "[DEFAULT]\ndebug = false\n[cidr_allocator]\ndriver = db\n"
                   "pool_cidrs = 10.0.0.0/22\nsubnet_prefixlen = 24\n"
                   "[cidr_allocator_database]\nconnection = sqlite:///%s\n"
                   % self.database)

    def path(self, relative):
        return os.path.join(self.root, relative)

    def write(self, path, text):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def test_the_tools_read_murano_conf_without_config_file(self):
        self.assertEqual(0, self.run_main(manage.main, "db", "sync")[0])
        self.assertTrue(os.path.exists(self.database))
        code, cidr, err = self.run_main(cli.main, "allocate", "net-1",
                                        "--scope", "r")
        self.assertEqual((0, ""), (code, err))
        code, out, err = self.run_main(cli.main, "list")
        self.assertEqual((0, ""), (code, err))
        self.assertIn(cidr.strip(), out)

    def test_a_config_dir_file_wins_over_the_file(self):
        other = os.path.join(self.state_path, "other.sqlite")
        self.write(os.path.join(self.conf_d, "50-cidr.conf"),
                   "[cidr_allocator_database]\nconnection = sqlite:///%s\n"
                   % other)
        self.assertEqual(0, self.run_main(manage.main, "db", "sync")[0])
        self.assertTrue(os.path.exists(other))
        self.assertFalse(os.path.exists(self.database))

    def test_config_file_replaces_the_search(self):
        given = os.path.join(self.state_path, "given.conf")
        self.write(given, "[cidr_allocator]\ndriver = random\n")
        code, out, err = self.run_main(cli.main, "--config-file", given,
                                       "--verbose", "allocate", "x")
        self.assertEqual(0, code, err)
        self.assertIn("Configuration: %s; driver random, no store" % given,
                      err)

    def test_config_file_replaces_the_search_of_directories_too(self):
        # Issue 32: the host's murano.conf.d was read beside the file the
        # operator named, and its settings won.
        self.write(os.path.join(self.conf_d, "50-cidr.conf"),
                   "[cidr_allocator]\ndriver = legacy\n")
        given = os.path.join(self.state_path, "given.conf")
        self.write(given, "[cidr_allocator]\ndriver = random\n")
        code, out, err = self.run_main(cli.main, "--config-file", given,
                                       "--verbose", "allocate", "x")
        self.assertEqual(0, code, err)
        self.assertIn("Configuration: %s; driver random, no store" % given,
                      err)

    def test_config_dir_replaces_the_search_of_files_too(self):
        # Issue 32: --config-dir still read /etc/murano/murano.conf.
        given = os.path.join(self.state_path, "given.d")
        self.write(os.path.join(given, "cidr.conf"),
                   "[cidr_allocator]\ndriver = random\n")
        code, out, err = self.run_main(cli.main, "--config-dir", given,
                                       "--verbose", "allocate", "x")
        self.assertEqual(0, code, err)
        self.assertIn("Configuration: %s; driver random, no store"
                      % os.path.join(given, "cidr.conf"), err)

    def test_a_directory_given_as_a_file_is_a_usage_error(self):
        # Issue 32: exit 1 "[Errno 21] Is a directory", where other bad
        # configuration files get exit 2.
        os.makedirs(self.conf_d)
        for main, command in ((cli.main, ["list"]),
                              (manage.main, ["db", "version"]),
                              (status.main, ["upgrade", "check"])):
            code, out, err = self.run_main(main, "--config-file",
                                           self.conf_d, *command)
            self.assertEqual(2, code, err)
            self.assertEqual(
                "%s: is a directory: --config-file takes a file, "
                "--config-dir a directory of *.conf files" % self.conf_d,
                err.strip().split(": error: ", 1)[1])

    def test_hints_name_the_configuration_read(self):
        # Issue 32: every hint said "--config-file <file>", whatever the
        # operator had given (or the search had found).
        missing = os.path.join(self.state_path, "no.sqlite")
        given = os.path.join(self.state_path, "given.conf")
        self.write(given, "[cidr_allocator_database]\nconnection = "
                   "sqlite:///%s\n" % missing)
        code, out, err = self.run_main(cli.main, "--config-file", given,
                                       "list")
        self.assertEqual(2, code, err)
        self.assertIn("run 'murano-cidr-manage --config-file %s db sync' "
                      "first" % given, err)
        self.write(self.murano_conf, "[cidr_allocator_database]\n"
                   "connection = sqlite:///%s\n" % missing)
        code, out, err = self.run_main(cli.main, "list")
        self.assertEqual(2, code, err)
        self.assertIn("run 'murano-cidr-manage --config-file %s db sync' "
                      "first" % self.murano_conf, err)

    def test_help_lists_the_files_searched_in_order(self):
        out = self.useFixture(fixtures.StringStream("stdout")).stream
        self.useFixture(fixtures.MonkeyPatch("sys.stdout", out))
        e = self.assertRaises(SystemExit, cli.main, ["--help"])
        self.assertEqual(0, e.code)
        out.seek(0)
        text = " ".join(out.read().split()).replace("- ", "-")
        self.assertIn("Without --config-file or --config-dir, these are "
                      "read if they exist, in order, a later value winning: "
                      "%s, %s, then the *.conf files of %s."
                      % (self.murano_conf,
                         self.path("etc/murano-cidr/murano-cidr.conf"),
                         self.conf_d), text)

    def test_verbose_names_the_configuration_and_the_database(self):
        self.run_main(manage.main, "db", "sync")
        code, out, err = self.run_main(cli.main, "--verbose", "list")
        self.assertEqual(0, code, err)
        lines = [line for line in err.splitlines()
                 if "Configuration:" in line]
        self.assertEqual(1, len(lines), err)
        self.assertIn("Configuration: %s; driver db, database sqlite:///%s"
                      % (self.murano_conf, self.database), lines[0])

    def test_manage_names_the_configuration_and_the_database(self):
        for command in (["db", "sync"], ["db", "version"],
                        ["db", "stamp", "head"]):
            code, out, err = self.run_main(manage.main, "--verbose",
                                           *command)
            self.assertEqual(0, code, err)
            lines = [line for line in err.splitlines()
                     if "Configuration:" in line]
            self.assertEqual(1, len(lines), err)
            self.assertIn("Configuration: %s; driver db, database "
                          "sqlite:///%s" % (self.murano_conf, self.database),
                          lines[0])

    def test_the_password_is_hidden(self):
        self.write(os.path.join(self.conf_d, "db.conf"),
                   "[cidr_allocator_database]\nconnection = "
                   "postgresql+psycopg2://cidr:s3cret@127.0.0.1:9/cidr\n"
                   "max_retries = 0\n")
        code, _out, err = self.run_main(cli.main, "--verbose", "list")
        self.assertNotEqual(0, code)
        self.assertNotIn("s3cret", err)
        self.assertIn("Configuration: %s, %s; driver db, database "
                      "postgresql+psycopg2://cidr:***@127.0.0.1:9/cidr"
                      % (self.murano_conf,
                         os.path.join(self.conf_d, "db.conf")), err)


class TestDefaults(base.TestCase):

    def test_only_files_that_exist_are_given_to_oslo_config(self):
        root = self.useFixture(fixtures.TempDir()).path
        present = os.path.join(root, "present.conf")
        open(present, "w").close()
        self.useFixture(fixtures.MonkeyPatch(
            "murano_cidr.operator.cmd.configuration.SEARCH_FILES",
            (os.path.join(root, "absent.conf"), present)))
        self.useFixture(fixtures.MonkeyPatch(
            "murano_cidr.operator.cmd.configuration.SEARCH_DIRS",
            (root, os.path.join(root, "absent.d"))))
        self.assertEqual([present], configuration.default_files())
        self.assertEqual([root], configuration.default_dirs())
