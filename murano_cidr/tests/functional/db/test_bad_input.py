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

"""Bad and odd input on every backend: a typed error, or kept exactly."""

import sqlalchemy as sa

from murano_cidr.engine.drivers.db import allocating
from murano_cidr.engine.drivers.db import compat
from murano_cidr import exceptions
from murano_cidr.tests.functional.db import base


class BadInputTests(object):

    def setUp(self):
        super().setUp()
        self.sync()
        self.driver = self.make_driver()

    def count(self):
        with self.engine.connect() as conn:
            return conn.execute(compat.select(sa.func.count()).select_from(
                allocating.ALLOCATIONS)).scalar()

    def test_rejected_owners_scopes_and_taken_write_nothing(self):
        cases = [
            {"owner": "x" * 256}, {"owner": ""}, {"owner": "  "},
            {"owner": None}, {"owner": 4.2}, {"owner": b"net-1"},
            {"owner": "net\x00"}, {"owner": "net-1 "},
            {"scope": ""}, {"scope": "y" * 256}, {"scope": True},
            {"scope": " r"}, {"scope": "tab\there"},
            {"taken": ["not-a-cidr"]}, {"taken": [None]},
            {"taken": "10.0.0.0/24"}, {"taken": 17},
            {"taken": lambda: ["10.0.0.0/33"]},
            {"ip_version": 5},
        ]
        for case in cases:
            args = {"owner": "net-1", "scope": "r"}
            args.update(case)
            self.assertRaises(exceptions.InvalidArgument,
                              self.driver.allocate, **args)
        self.assertEqual(0, self.count())

    def test_integer_ids_are_stored_as_their_strings(self):
        cidr = self.driver.allocate(42, scope=7)
        self.assertEqual(cidr, self.driver.allocate("42", scope="7"))
        self.assertEqual([("42", "7")], [(a.owner, a.scope)
                                         for a in self.driver.list()])
        self.assertEqual(1, self.count())

    def test_odd_owners_and_scopes_are_kept_exactly(self):
        odd = ["Net-1", "net-1", "n\u00e9t-1", "ne\u0301t-1", "x" * 255,
               "\u00e9" * 255, "a'b\"c;--", "r/1\\2", "%_*", "\u4e2d\u6587"]
        cidrs = {}
        for i, value in enumerate(odd):
            cidrs[value] = self.driver.allocate(value, scope=value)
            self.driver.allocate("o-%d" % i, scope=value)
        self.assertEqual(2 * len(odd), self.count())
        for value in odd:
            held = self.driver.get(value)
            self.assertEqual((value, value, cidrs[value]),
                             (held.owner, held.scope, held.cidr))
            self.assertEqual(2, len(self.driver.list(value)))

    def test_characters_beyond_the_basic_plane(self):
        # MySQL included: the driver asks for utf8mb4 connections.
        owner = "net-\U0001f600"
        cidr = self.driver.allocate(owner, scope="r-\U0001f600")
        self.assertEqual((owner, cidr), (self.driver.get(owner).owner,
                                         self.driver.get(owner).cidr))
        self.assertEqual(1, self.count())


class TestSqlite(base.SqliteBackend, BadInputTests, base.DbTestCase):
    pass


class TestMySQL(base.MySQLBackend, BadInputTests, base.DbTestCase):
    pass


class TestPostgresql(base.PostgresqlBackend, BadInputTests,
                     base.DbTestCase):
    pass
