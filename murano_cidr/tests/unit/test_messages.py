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

"""Operator text: one line, no passwords; and the one overlap check."""

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
import testtools

from murano_cidr import messages
from murano_cidr.operator import overlaps


class TestOneLine(testtools.TestCase):

    def test_lines_are_joined(self):
        self.assertEqual("boom again",
                         messages.one_line(RuntimeError("boom\n  again\n")))
        self.assertEqual("ValueError", messages.one_line(ValueError()))
        self.assertEqual("boom", messages.clause(RuntimeError("boom.")))

    def test_sqlalchemy_details_are_left_out(self):
        error = sa_exc.OperationalError(
            "INSERT INTO murano_cidr_allocations VALUES (?)", ("net-1",),
            RuntimeError("database is locked"))
        self.assertIn("[SQL:", str(error))
        self.assertEqual("(builtins.RuntimeError) database is locked",
                         messages.one_line(error))

    def test_inner_errors_are_read(self):
        class Wrapper(Exception):
            inner_exception = RuntimeError("the inner one")
        self.assertEqual("the inner one", messages.one_line(Wrapper("x")))


class TestSafeUrl(testtools.TestCase):

    def test_passwords_are_hidden(self):
        for url, shown in (
                ("mysql+pymysql://u:pw@127.0.0.1:1/x",
                 "mysql+pymysql://u:***@127.0.0.1:1/x"),
                ("redis://:s3cret@h:6379", "redis://:***@h:6379"),
                ("mysql://u:p/w@rd@h/db?charset=utf8",
                 "mysql://u:***@h/db?charset=utf8"),
                ("redis://h:6379?db=1&password=s3cret",
                 "redis://h:6379?db=1&password=***"),
                ("redis://h:6379", "redis://h:6379"),
                ("sqlite:////var/lib/x", "sqlite:////var/lib/x")):
            self.assertEqual(shown, messages.safe_url(url))

    def test_sqlalchemy_urls(self):
        self.assertEqual("mysql://u:***@h/db", messages.safe_url(
            sa.engine.url.make_url("mysql://u:pw@h/db")))


class TestScopeOverlaps(testtools.TestCase):

    def test_overlaps_within_a_scope_only(self):
        items = [("r", 4, 0, 255, "a"), ("r", 4, 256, 511, "b"),
                 ("r", 4, 0, 511, "wide"), ("r", 4, 300, 300, "inside"),
                 ("other", 4, 0, 255, "elsewhere"), (None, 4, 0, 9, "free"),
                 ("r", 6, 0, 255, "v6")]

        def extent(item):
            return None if item[0] is None else item[:4]

        found = overlaps.scope_overlaps(items, extent)
        self.assertEqual([("a", "wide"), ("b", "wide"), ("inside", "wide")],
                         [(item[4], other[4]) for item, other in found])
