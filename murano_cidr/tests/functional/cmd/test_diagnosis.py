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

"""A database named wrongly says so, on MariaDB and PostgreSQL for real.

A refused password or an unknown database is the configuration's fault
(exit code 2), not an unreachable server (3); stamping a database without
tables says to run ``db sync``; no message shows the connection parameters
the library adds to the URL.
"""

import os
import uuid

import sqlalchemy as sa
import testscenarios

from murano_cidr.operator.cmd import cli
from murano_cidr.operator.cmd import common
from murano_cidr.operator.cmd import manage
from murano_cidr.tests import base
from murano_cidr.tests import db_fixture

load_tests = testscenarios.load_tests_apply_scenarios


class TestDiagnosis(base.TestCase):

    scenarios = [(backend, {"backend": backend})
                 for backend in (db_fixture.MYSQL, db_fixture.POSTGRESQL)]

    def setUp(self):
        super().setUp()
        self.db = self.use_database(self.backend)

    def run_with(self, url, main, *args):
        conf = os.path.join(self.state_path, "murano-cidr.conf")
        with open(conf, "w") as f:
            f.write("[cidr_allocator]\ndriver = db\n"
                    "[cidr_allocator_database]\nconnection = %s\n"
                    % url.render_as_string(hide_password=False))
        return self.run_main(main, "--config-file", conf, *args)

    def assertConfigurationError(self, url, *fragments):
        for main, args in ((manage.main, ("db", "sync")),
                           (cli.main, ("list",))):
            code, _out, err = self.run_with(url, main, *args)
            self.assertEqual(common.EXIT_USAGE, code, err)
            self.assertEqual(1, len(err.strip().splitlines()), err)
            self.assertIn("Invalid value for [cidr_allocator_database] "
                          "connection: ", err)
            for fragment in fragments:
                self.assertIn(fragment, err)
            self.assertNotIn("unavailable", err)

    def test_an_unknown_database_is_a_configuration_error(self):
        url = sa.engine.make_url(self.db.url).set(
            database="nonexistent_%s" % uuid.uuid4().hex[:12])
        self.assertConfigurationError(url, "the database does not exist")

    def assertMuranoDbError(self, murano_url, *fragments):
        # Issue 32: prune --murano-db said "unavailable" (exit 3) with the
        # driver's raw text for the mistakes the connection option names.
        code, _out, err = self.run_with(
            sa.engine.make_url(self.db.url), cli.main, "prune",
            "--murano-db", murano_url.render_as_string(hide_password=False))
        self.assertEqual(common.EXIT_USAGE, code, err)
        self.assertEqual(1, len(err.strip().splitlines()), err)
        self.assertIn("Invalid Murano database", err)
        for fragment in fragments:
            self.assertIn(fragment, err)
        self.assertNotIn("unavailable", err)

    def test_an_unknown_murano_database_is_a_usage_error(self):
        url = sa.engine.make_url(self.db.url).set(
            database="nonexistent_%s" % uuid.uuid4().hex[:12])
        self.assertMuranoDbError(url, "the database does not exist",
                                 "Nothing was changed")
        if self.backend == db_fixture.MYSQL:
            # NOTE: not on PostgreSQL, whose trust authentication here
            # accepts any password.
            url = sa.engine.make_url(self.db.url).set(
                password="wrong-%s" % uuid.uuid4().hex[:8])
            self.assertMuranoDbError(
                url, "the server refused the user name or password", "***")

    def test_a_refused_password_is_a_configuration_error(self):
        url = sa.engine.make_url(self.db.url).set(
            password="wrong-%s" % uuid.uuid4().hex[:8])
        engine = sa.create_engine(url)
        try:
            with engine.connect():
                self.skipTest("this server does not check passwords "
                              "(PostgreSQL's trust authentication)")
        except sa.exc.OperationalError:
            pass
        finally:
            engine.dispose()
        self.assertConfigurationError(
            url, "the server refused the user name or password", "***")

    def test_stamp_without_tables_says_run_db_sync(self):
        url = sa.engine.make_url(self.db.url)
        code, _out, err = self.run_with(url, manage.main, "db", "stamp",
                                        "head")
        self.assertEqual(common.EXIT_USAGE, code, err)
        self.assertIn("has no murano-cidr tables", err)
        self.assertIn("run 'murano-cidr-manage --config-file %s db sync'"
                      % os.path.join(self.state_path, "murano-cidr.conf"),
                      err)
        self.assertNotIn("Invalid revision", err)
        for internal in ("connect_timeout", "keepalives", "statement_timeout",
                         "read_timeout", "?"):
            self.assertNotIn(internal, err)
