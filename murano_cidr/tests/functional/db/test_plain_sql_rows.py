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

"""Rows the library did not write are never overlapped, on every backend.

An operator's hand, an older release or a tool that skipped the library
may write allocation rows by plain SQL: CIDRs of other prefix lengths,
of other pools, rows of other scopes, released rows still held. The
driver must never hand out a CIDR overlapping a live or held row of its
scope, whatever the process remembers of the scope from before.
"""

import netaddr
import sqlalchemy as sa

from murano_cidr import exceptions
from murano_cidr.tests.functional.db import base

#: Eight /24 candidates: 10.9.0.0/24 to 10.9.7.0/24.
POOL = {"pool_cidrs": ["10.9.0.0/21"], "subnet_prefixlen": 24}

#: What plain SQL writes into each scope, after the engine's first
#: allocation there: ``(cidr, released)``.
ROWS = [
    ("10.9.2.0/23", False),     # a larger prefix over two candidates
    ("10.9.4.128/25", False),   # a smaller one inside a candidate
    ("10.9.5.64/26", False),    # another pool's subnet
    ("10.9.6.0/24", True),      # released, held back by release_grace
    ("172.16.0.0/12", False),   # another pool, outside ours
]

#: A row of another scope over the whole pool: it blocks nothing here.
OTHER_SCOPE_ROW = "10.9.0.0/16"

#: What is left free in each scope: the first allocation took 10.9.0.0/24.
FREE = {"10.9.1.0/24", "10.9.7.0/24"}

SCOPES = 8

_INSERT = sa.text(
    "INSERT INTO murano_cidr_allocations (owner, scope, ip_version, cidr, "
    "range_first, range_last, confirmed, created_at, released_at, "
    "released_owner) VALUES (:owner, :scope, 4, :cidr, :first, :last, "
    ":confirmed, CURRENT_TIMESTAMP, "
    "CASE WHEN :released = 1 THEN CURRENT_TIMESTAMP ELSE NULL END, "
    ":released_owner)")


def _key(address):
    return "%032x" % address


class PlainSqlRowTests(object):

    def insert_plain(self, owner, scope, cidr, released=False):
        network = netaddr.IPNetwork(cidr)
        with self.engine.begin() as conn:
            conn.execute(_INSERT, {
                "owner": None if released else owner, "scope": scope,
                "cidr": cidr, "first": _key(network.first),
                "last": _key(network.last), "confirmed": True,
                "released": 1 if released else 0,
                "released_owner": owner if released else None})

    def scope_rows(self, scope):
        with self.engine.connect() as conn:
            return [netaddr.IPNetwork(cidr) for (cidr,) in conn.execute(
                sa.text("SELECT cidr FROM murano_cidr_allocations "
                        "WHERE scope = :scope"), {"scope": scope})]

    def test_rows_written_by_plain_sql_are_never_overlapped(self):
        self.sync()
        driver = self.make_driver(**POOL)
        everything_but_first = ["10.9.%d.0/24" % i for i in range(1, 8)]
        for n in range(SCOPES):
            scope = "router-%d" % n
            # The engine knows the scope before the rows appear.
            self.assertEqual("10.9.0.0/24", driver.allocate(
                "seed-%d" % n, scope=scope, taken=everything_but_first))
            for i, (cidr, released) in enumerate(ROWS):
                self.insert_plain("sql-%d-%d" % (n, i), scope, cidr,
                                  released)
            self.insert_plain("other-%d" % n, "other-%d" % n,
                              OTHER_SCOPE_ROW)
            got = {driver.allocate("net-%d-%d" % (n, i), scope=scope)
                   for i in range(len(FREE))}
            self.assertEqual(FREE, got)
            self.assertRaises(exceptions.PoolExhausted, driver.allocate,
                              "net-%d-full" % n, scope=scope)
            rows = self.scope_rows(scope)
            for i, one in enumerate(rows):
                for other in rows[i + 1:]:
                    self.assertFalse(
                        one in other or other in one,
                        "%s overlaps %s in %s" % (one, other, scope))


class TestSqlite(base.SqliteBackend, PlainSqlRowTests, base.DbTestCase):
    pass


class TestMySQL(base.MySQLBackend, PlainSqlRowTests, base.DbTestCase):
    pass


class TestPostgresql(base.PostgresqlBackend, PlainSqlRowTests,
                     base.DbTestCase):
    pass
