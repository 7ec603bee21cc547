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

"""Waiting for a database that does not answer: said, and bounded.

The pauses are recorded, not slept: oslo.db's retry decorator sleeps with
``time.sleep``, replaced here by a list of the pauses asked for, which
moves a fake clock on.
"""

import logging
import os
import sqlite3

import fixtures
import sqlalchemy as sa

from murano_cidr.engine import allocator
from murano_cidr.engine.drivers.db import options as db_options
from murano_cidr.engine.drivers.db import sqlite
from murano_cidr import exceptions
from murano_cidr.operator.cmd import cli
from murano_cidr.operator.cmd import manage
from murano_cidr.tests import base

#: Nothing listens on port 1 (MySQL's client is in test-requirements).
DOWN = "mysql+pymysql://murano:s3cret@127.0.0.1:1/murano"
SHOWN = "murano:***@127.0.0.1:1/murano"


class WaitTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.pauses = []
        self.now = 1000.0
        self.useFixture(fixtures.MonkeyPatch("time.sleep", self.pause))
        self.useFixture(fixtures.MonkeyPatch(
            "murano_cidr.engine.drivers.db.api.time.monotonic",
            lambda: self.now))

    def pause(self, seconds):
        self.pauses.append(seconds)
        self.now += seconds


class TestEngineWait(WaitTestCase):
    """A service (the engine) waits as the options say, within a call."""

    def driver(self, **database):
        self.config(driver="db")
        self.config_fixture.config(group=db_options.GROUP,
                                   connection=DOWN, **database)
        driver = allocator.get_allocator(self.conf)
        self.addCleanup(driver.close)
        return driver

    def test_the_first_call_ends_within_call_timeout(self):
        # Issue 24.2: oslo.db tried 10 times 10 s apart (plus a pause
        # after the last attempt) whatever call_timeout was. Now the
        # defaults (10 attempts, 10 s apart) stop at call_timeout (30 s):
        # attempts at 0, 10 and 20 s.
        driver = self.driver()
        e = self.assertRaises(exceptions.DatabaseUnavailable, driver.list)
        self.assertEqual([10, 10], self.pauses)
        self.assertIn("3 attempts 10 s apart within 30 s", str(e))

    def test_each_attempt_is_logged_and_the_error_names_the_database(
            self):
        logger = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        driver = self.driver(max_retries=3, retry_interval=7)
        e = self.assertRaises(exceptions.DatabaseUnavailable,
                              driver.allocate, "net-1", scope="r")
        self.assertEqual([7, 7], self.pauses)
        self.assertIn(SHOWN, str(e))
        self.assertIn("3 attempts 7 s apart", str(e))
        waits = [line for line in logger.output.splitlines()
                 if "Cannot connect to the allocation database" in line]
        # The last attempt's failure is the error.
        self.assertEqual(2, len(waits), logger.output)
        self.assertNotIn("s3cret", logger.output)

    def test_no_retries(self):
        logger = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        driver = self.driver(max_retries=0)
        self.assertRaises(exceptions.DatabaseUnavailable, driver.list)
        self.assertEqual([], self.pauses)
        self.assertNotIn("Cannot connect to", logger.output)


class TestCommandWait(WaitTestCase):
    """An operator's command gives up within seconds, and says why."""

    def write_config(self, extra=""):
        path = os.path.join(self.state_path, "murano.conf")
        with open(path, "w") as f:
            f.write("[cidr_allocator]\nstate_path = %s\n"
                    "[cidr_allocator_database]\nconnection = %s\n%s"
                    % (self.state_path, DOWN, extra))
        return path

    def test_commands_use_a_short_budget(self):
        path = self.write_config()
        for main, args in ((cli.main, ["list"]),
                           (manage.main, ["db", "sync"])):
            del self.pauses[:]
            code, out, err = self.run_main(main, "--config-file", path,
                                           *args)
            self.assertEqual(3, code, err)
            self.assertEqual([db_options.COMMAND_RETRY_INTERVAL]
                             * (db_options.COMMAND_MAX_RETRIES - 1),
                             self.pauses)
            lines = err.strip().splitlines()
            # A line per failed attempt followed by another, then the
            # error.
            self.assertEqual(db_options.COMMAND_MAX_RETRIES, len(lines),
                             err)
            for line in lines[:-1]:
                self.assertIn("Cannot connect to the allocation database",
                              line)
            self.assertIn("error: The allocation database", lines[-1])
            self.assertIn(SHOWN, lines[-1])
            self.assertNotIn("s3cret", err)

    def test_the_configuration_file_wins(self):
        path = self.write_config("max_retries = 5\nretry_interval = 2\n")
        code, out, err = self.run_main(cli.main, "--config-file", path,
                                       "list")
        self.assertEqual(3, code, err)
        self.assertEqual([2] * 4, self.pauses)


class TestLockedSqliteFile(base.TestCase):
    """A connection opens on a file another connection holds locked."""

    def test_the_wal_pragma_leaves_the_file_s_mode(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path, "x.db")
        holder = sqlite3.connect(path, isolation_level=None)
        self.addCleanup(holder.close)
        holder.execute("BEGIN EXCLUSIVE")
        # timeout=0: SQLite's busy wait would end the same way, later.
        engine = sa.create_engine("sqlite:///%s?timeout=0" % path)
        self.addCleanup(engine.dispose)
        sqlite.wal(engine)
        with engine.connect() as conn:
            self.assertFalse(conn.closed)
