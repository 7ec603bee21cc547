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

"""``murano-cidr-status upgrade check``, check by check."""

import json
import os
from unittest import mock

import fixtures
from oslo_upgradecheck import upgradecheck

from murano_cidr.operator.cmd import status
from murano_cidr.operator.drivers.db import revisions
from murano_cidr.tests import base
from murano_cidr.tests import murano_engines

SUCCESS = upgradecheck.Code.SUCCESS
WARNING = upgradecheck.Code.WARNING
FAILURE = upgradecheck.Code.FAILURE


class TestChecks(base.TestCase):

    def setUp(self):
        super().setUp()
        self.checks = status.Checks(self.conf)

    def assertResult(self, code, text, result):
        self.assertEqual(code, result.code, result.details)
        self.assertIn(text, result.details)
        self.assertEqual(1, len(result.details.splitlines()))

    def test_pool_success(self):
        self.assertResult(SUCCESS, "10.0.0.0/16 into /24: 256 subnets "
                          "(max_environments = 250)", self.checks.check_pool())

    def test_pool_failure_names_the_option(self):
        self.config(env_ip_template="10.0.3.0")
        self.assertResult(FAILURE, "[cidr_allocator] env_ip_template",
                          self.checks.check_pool())
        self.config(env_ip_template="10.0.0.0", pool_cidrs=["10.0.0.0/33"],
                    subnet_prefixlen=24)
        self.assertResult(FAILURE, "[cidr_allocator] pool_cidrs",
                          self.checks.check_pool())

    def test_pool_too_small_warns(self):
        self.config(pool_cidrs=["10.0.0.0/22"], subnet_prefixlen=24,
                    max_environments=5)
        self.assertResult(WARNING, "holds 4 subnets, fewer than "
                          "max_environments = 5", self.checks.check_pool())

    def test_driver(self):
        self.config(driver="random")
        self.assertResult(SUCCESS, "Driver 'random' loads and makes "
                          "collisions rarer", self.checks.check_driver())
        self.config(driver="nope")
        self.assertResult(FAILURE, "installed drivers:",
                          self.checks.check_driver())
        self.config(driver="random", max_hosts=1)
        self.assertResult(FAILURE, "max_hosts", self.checks.check_driver())

    def test_murano_engine_without_murano_s_options(self):
        # A caller that registered no [murano]: nothing set there.
        self.assertEqual(SUCCESS, self.checks.check_murano_engine().code)

    def test_store_checks_skip_other_drivers(self):
        self.config(driver="random")
        self.assertResult(SUCCESS, "Not used by driver 'random'",
                          self.checks.run("Database"))
        self.assertResult(SUCCESS, "Not used by driver 'random'",
                          self.checks.run("Lock service"))

    def _revision(self, revision, tables=()):
        self.config(driver="db")
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.operator.drivers.db.migration.current_schema",
            return_value=(revision, list(tables))))
        return self.checks.run("Database")

    def test_database_revisions(self):
        head = revisions.head_revision()
        self.assertResult(SUCCESS, "at the head revision %s" % head,
                          self._revision(head))
        # No configuration file read: the search finds the same again.
        self.assertResult(FAILURE, "has no murano-cidr tables; run "
                          "'murano-cidr-manage db sync'",
                          self._revision(None))
        path = os.path.join(self.state_path, "my cloud.conf")
        with open(path, "w") as f:
            f.write("[DEFAULT]\n")
        self.conf(["--config-file", path])
        self.assertResult(FAILURE, "has no murano-cidr tables; run "
                          "'murano-cidr-manage --config-file '%s' db sync'"
                          % path, self._revision(None))
        self.assertResult(FAILURE, "until then every deployment that needs "
                          "a CIDR fails with DatabaseNotSynced",
                          self._revision(None))
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.operator.drivers.db.revisions.known_revisions",
            return_value={head, "older"}))
        self.assertResult(FAILURE, "is at revision older, this code needs "
                          "%s; run" % head, self._revision("older"))
        self.assertResult(WARNING, "its schema is newer. Upgrade "
                          "murano-cidr", self._revision("future"))

    def test_a_store_of_one_host_is_a_warning(self):
        self.config(driver="db")
        self.assertResult(WARNING, "keeps its state in the SQLite database "
                          "sqlite:///%s" % self.state_path,
                          self.checks.check_store_hosts())
        self.assertResult(WARNING, "set [cidr_allocator_database] "
                          "connection", self.checks.check_store_hosts())
        self.config_fixture.config(
            group="cidr_allocator_database",
            connection="mysql+pymysql://u:secret@db.example.org/murano")
        self.assertResult(SUCCESS, "Nothing limits driver 'db'",
                          self.checks.check_store_hosts())
        self.config(driver="lock")
        self.assertResult(WARNING, "file locks under",
                          self.checks.check_store_hosts())
        self.config(driver="random")
        self.assertResult(SUCCESS, "Nothing limits driver 'random'",
                          self.checks.check_store_hosts())
        self.config(driver="nope")
        self.assertResult(SUCCESS, "Not checked: No allocator driver",
                          self.checks.check_store_hosts())

    def test_unreachable_database(self):
        self.config(driver="db")
        self.config_fixture.config(
            group="cidr_allocator_database",
            connection="postgresql+psycopg2://u:secret@127.0.0.1:1/x",
            max_retries=0)
        result = self.checks.run("Database")
        self.assertResult(FAILURE, "u:***@127.0.0.1:1/x", result)
        self.assertNotIn("secret", result.details)

    def test_lock_path(self):
        self.config(driver="lock")
        self.assertResult(SUCCESS, "File locks under %s"
                          % os.path.join(self.state_path, "locks"),
                          self.checks.run("Lock service"))
        blocker = os.path.join(self.state_path, "file")
        open(blocker, "w").close()
        self.config_fixture.config(group="oslo_concurrency",
                                   lock_path=os.path.join(blocker, "locks"))
        self.assertResult(FAILURE, "File locks cannot be taken",
                          self.checks.run("Lock service"))
        self.config_fixture.config(group="oslo_concurrency",
                                   lock_path=blocker)
        self.assertResult(FAILURE, "exists and is not a directory",
                          self.checks.run("Lock service"))

    def test_unreachable_coordinator(self):
        # Port 1 on the loopback: nothing listens, the connection is refused.
        self.config(driver="lock",
                    coordination_url="redis://:secret@127.0.0.1:1")
        result = self.checks.run("Lock service")
        self.assertResult(FAILURE, "redis://:***@127.0.0.1:1 does not "
                          "answer", result)
        self.assertNotIn("secret", result.details)

    def test_zookeeper_host_list(self):
        # Issue 33: "bad URL: Port could not be cast...", though the
        # allocator uses the URL fine. Nothing listens on port 1.
        self.config(driver="lock",
                    coordination_url="zookeeper://127.0.0.1:1,127.0.0.1:1,"
                    "127.0.0.1:1")
        result = self.checks.run("Lock service")
        self.assertResult(FAILURE, "does not answer: cannot connect to "
                          "127.0.0.1:1", result)
        self.assertNotIn("bad URL", result.details)

    def test_unknown_coordinator_backend(self):
        self.config(driver="lock", coordination_url="nope://host")
        self.assertResult(FAILURE, "nope://host",
                          self.checks.run("Lock service"))

    def test_unexpected_errors_are_one_line_failures(self):
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.engine.pool.pools_from_conf",
            side_effect=RuntimeError("boom\nagain")))
        self.assertResult(FAILURE, "RuntimeError: boom again",
                          self.checks.check_pool())


class TestMain(base.TestCase):

    def broken_entry_point(self):
        # Once the options are registered, loading the drivers' classes
        # fails.
        package = mock.Mock(wraps=status.driver_commands)
        package.driver_classes.side_effect = RuntimeError(
            "broken entry point")
        self.useFixture(fixtures.MockPatchObject(status, "driver_commands",
                                                 package))

    def run_status(self, config, *args):
        path = os.path.join(self.state_path, "murano-cidr.conf")
        with open(path, "w") as f:
            f.write("[cidr_allocator]\ndriver = random\nstate_path = %s\n%s"
                    % (self.state_path, config))
        return self.run_main(status.main, "--config-file", path, *args)

    def test_exit_codes_follow_the_worst_check(self):
        code, out, _ = self.run_status("", "upgrade", "check")
        self.assertEqual(0, code)
        self.assertIn("Check: Pool geometry", out)
        code, out, _ = self.run_status(
            "pool_cidrs = 10.0.0.0/22\nsubnet_prefixlen = 24\n",
            "upgrade", "check", "--json")
        self.assertEqual(1, code)
        results = {c["check"]: c["result"] for c in json.loads(out)["checks"]}
        self.assertEqual({"Pool geometry": 1, "Allocator driver": 0,
                          "Store hosts": 0, "Murano engine": 0,
                          "Database": 0, "Lock service": 0}, results)
        code, out, _ = self.run_status("max_hosts = 1\n", "upgrade", "check")
        self.assertEqual(2, code)
        self.assertIn("Result: Failure", out)

    def test_enabled_plugins_fail_with_the_fix(self):
        # Stevedore 3 and later (Victoria on): the loaders fail on the list.
        self.useFixture(fixtures.MockPatchObject(
            status, "_loaders_read_enabled_plugins", return_value=False))
        code, out, _ = self.run_status(
            "[murano]\nenabled_plugins = murano-cidr\n", "upgrade", "check",
            "--json")
        self.assertEqual(2, code)
        results = {c["check"]: c for c in json.loads(out)["checks"]}
        engine = results["Murano engine"]
        self.assertEqual(2, engine["result"])
        self.assertIn("[murano] enabled_plugins is set (murano-cidr)",
                      engine["details"])
        self.assertIn("Remove enabled_plugins from [murano] and restart "
                      "murano-engine and murano-api.", engine["details"])

    def test_enabled_plugins_where_the_loaders_read_them(self):
        # Ussuri's stevedore: Murano's loaders honour the list.
        self.useFixture(fixtures.MockPatchObject(
            status, "_loaders_read_enabled_plugins", return_value=True))
        for listed, result, text in (
                ("murano-cidr", 0, "The engine's CIDRs come from driver"),
                ("other", 1, "does not name murano-cidr")):
            code, out, _ = self.run_status(
                "[murano]\nenabled_plugins = %s\n" % listed, "upgrade",
                "check", "--json")
            results = {c["check"]: c for c in json.loads(out)["checks"]}
            engine = results["Murano engine"]
            self.assertEqual(result, engine["result"], listed)
            self.assertIn(text, engine["details"])

    def test_the_loaders_read_enabled_plugins_with_ussuri_s_stevedore(self):
        self.assertEqual(murano_engines.ENTRY_POINTS_NAME_THEIR_PROJECT,
                         status._loaders_read_enabled_plugins())

    def test_no_driver_set_says_the_engine_picks_itself(self):
        path = os.path.join(self.state_path, "murano.conf")
        with open(path, "w") as f:
            f.write("[DEFAULT]\n")
        code, out, _ = self.run_main(status.main, "--config-file", path,
                                     "upgrade", "check", "--json")
        results = {c["check"]: c for c in json.loads(out)["checks"]}
        engine = results["Murano engine"]
        self.assertEqual(0, engine["result"])
        self.assertIn("No [cidr_allocator] driver is set: the engine picks "
                      "its CIDRs itself", engine["details"])
        code, out, _ = self.run_status("", "upgrade", "check", "--json")
        results = {c["check"]: c for c in json.loads(out)["checks"]}
        self.assertIn("The engine's CIDRs come from driver 'random' (set in "
                      "%s" % os.path.join(self.state_path, "murano-cidr.conf"),
                      results["Murano engine"]["details"])

    def test_no_driver_set_checks_no_store_and_succeeds(self):
        # Rollback step 1: the driver line is gone from murano.conf, so the
        # engine picks its CIDRs itself; the commands' own default driver
        # (db) is no store the engine uses.
        path = os.path.join(self.state_path, "murano.conf")
        with open(path, "w") as f:
            f.write("[cidr_allocator]\nstate_path = %s\n" % self.state_path)
        code, out, err = self.run_main(status.main, "--config-file", path,
                                       "upgrade", "check", "--json")
        self.assertEqual(0, code, out + err)
        results = {c["check"]: c for c in json.loads(out)["checks"]}
        for check in ("Allocator driver", "Store hosts", "Database",
                      "Lock service"):
            self.assertEqual(
                (0, "Not used: no [cidr_allocator] driver is set; Murano's "
                 "engine picks CIDRs itself."),
                (results[check]["result"], results[check]["details"]),
                check)
        self.assertIn("the engine picks its CIDRs itself",
                      results["Murano engine"]["details"])
        # Nothing was opened or created where the db driver keeps its
        # SQLite file.
        self.assertEqual(["murano.conf"], os.listdir(self.state_path))
        code, out, _ = self.run_main(status.main, "--config-file", path,
                                     "upgrade", "check")
        self.assertEqual(0, code)
        self.assertNotIn("Result: Failure", out)
        self.assertNotIn("Result: Warning", out)

    def test_bad_option_value_is_a_failure(self):
        code, out, err = self.run_status("max_environments = many\n",
                                         "upgrade", "check", "--json")
        self.assertEqual(2, code)
        pool = json.loads(out)["checks"][0]
        self.assertEqual(2, pool["result"])
        self.assertTrue(pool["details"].startswith(
            "option max_environments in [cidr_allocator]: invalid literal "
            "for int() with base 10: 'many' ("), pool["details"])
        self.assertIn("fix the configuration file", pool["details"])
        self.assertNotIn("LocationInfo", out + err)
        self.assertNotIn("Traceback", out + err)

    def test_missing_configuration_file_is_one_line(self):
        code, _out, text = self.run_main(
            status.main, "--config-file", "/nonexistent.conf", "upgrade",
            "check")
        self.assertEqual(2, code)
        self.assertEqual("murano-cidr-status: error: Failed to find some "
                         "config files: /nonexistent.conf\n", text)

    def test_unexpected_error_outside_the_checks_is_not_a_warning(self):
        # 1 is oslo.upgradecheck's "warning": a broken installation must
        # not read as one.
        self.broken_entry_point()
        code, out, err = self.run_status("", "upgrade", "check")
        self.assertEqual(status.EXIT_UNEXPECTED, code)
        self.assertEqual(255, code)
        self.assertIn("unexpected error: RuntimeError: broken entry point",
                      err)
        self.assertNotIn("Traceback", out + err)

    def test_debug_is_read_from_the_given_arguments(self):
        # The error comes before the command line is parsed, so --debug
        # is looked for in the arguments main() was given.
        self.broken_entry_point()
        self.useFixture(fixtures.MonkeyPatch("sys.argv", ["prog"]))
        self.assertRaises(RuntimeError, self.run_main, status.main,
                          "--debug", "upgrade", "check")
        self.useFixture(fixtures.MonkeyPatch(
            "sys.argv", ["prog", "--debug"]))
        code, _out, err = self.run_main(status.main, "upgrade", "check")
        self.assertEqual(255, code)
        self.assertNotIn("Traceback", err)
