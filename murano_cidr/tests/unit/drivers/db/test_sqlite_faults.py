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

"""Which SQLite errors name a file system fault, without mounting any."""

import os
import sqlite3
from unittest import mock

from murano_cidr.engine.drivers.db import sqlite
from murano_cidr import exceptions
from murano_cidr.tests import base


def _statvfs(flag=0, free_blocks=1000):
    return os.statvfs_result((4096, 4096, 1000, free_blocks, free_blocks,
                              100, 100, 100, flag, 255))


class TestDiagnose(base.TestCase):

    def setUp(self):
        super().setUp()
        self.url = "sqlite:///%s/murano-cidr.sqlite" % self.state_path

    def error(self, code, text="disk I/O error"):
        error = sqlite3.OperationalError(text)
        error.sqlite_errorcode = code
        return error

    def diagnose(self, error, statvfs):
        with mock.patch("os.statvfs", return_value=statvfs):
            return sqlite.file_fault(self.url, "safe", error)

    def test_read_only_mount(self):
        fault = self.diagnose(self.error(14, "unable to open database file"),
                              _statvfs(flag=os.ST_RDONLY))
        self.assertIsInstance(fault, exceptions.DatabaseReadOnly)
        self.assertIn("%s is on a file system mounted read-only"
                      % self.state_path, str(fault))
        self.assertIn("unable to open database file", str(fault))

    def test_no_space(self):
        fault = self.diagnose(self.error(10), _statvfs(free_blocks=0))
        self.assertIsInstance(fault, exceptions.DatabaseFull)
        self.assertIn("has no space left (0 bytes free", str(fault))

    def test_a_directory_this_user_cannot_write(self):
        # What chmod does to a user other than root (root writes anyway).
        with mock.patch("os.access", return_value=False):
            fault = self.diagnose(self.error(8, "attempt to write a "
                                             "readonly database"),
                                  _statvfs())
        self.assertIsInstance(fault, exceptions.DatabaseReadOnly)
        self.assertIn("%s is not writable by this user" % self.state_path,
                      str(fault))

    def test_other_errors_are_left_alone(self):
        full = _statvfs(free_blocks=0)
        # SQLITE_BUSY is a lock, not the file system.
        self.assertIsNone(self.diagnose(self.error(5, "locked"), full))
        self.assertIsNone(self.diagnose(ValueError("x"), full))
        self.assertIsNone(self.diagnose(None, full))
        self.assertIsNone(self.diagnose(self.error(10), _statvfs()))
        self.assertIsNone(sqlite.file_fault(
            "mysql+pymysql://u@h/x", "safe", self.error(10)))

    def test_wrapped_errors_are_found(self):
        inner = self.error(13)
        outer = RuntimeError("wrapped")
        outer.__cause__ = inner
        self.assertIs(inner, sqlite.sqlite_error(outer))
