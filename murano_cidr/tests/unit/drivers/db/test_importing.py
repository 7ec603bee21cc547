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

"""The db driver's import_allocations (drivers/db/importing.py)."""

import datetime

import fixtures

from murano_cidr.engine import allocation
from murano_cidr import exceptions
from murano_cidr.operator import errors
from murano_cidr.tests.unit.drivers.db import base


def _alloc(owner, cidr, scope="r", ip_version=4, **kwargs):
    return allocation.Allocation(owner=owner, cidr=cidr, scope=scope,
                                 ip_version=ip_version, **kwargs)


class TestImport(base.DbTestCase):

    def setUp(self):
        super().setUp()
        self.driver = self.make_driver()

    def snapshot(self):
        return sorted((a.owner, a.cidr, a.scope) for a in self.driver.list())

    def test_import_records_and_blocks(self):
        created = datetime.datetime(2020, 1, 2, 3, 4, 5,
                                    tzinfo=datetime.timezone.utc)
        new = self.driver.import_allocations([
            _alloc("a", "10.20.0.0/24", created_at=created),
            _alloc("b", "10.20.1.7/24", confirmed=False)])
        self.assertEqual([("a", "10.20.0.0/24", True, created),
                          ("b", "10.20.1.0/24", False, new[1].created_at)],
                         [(a.owner, a.cidr, a.confirmed, a.created_at)
                          for a in new])
        self.assertEqual(created, self.driver.get("a").created_at)
        self.assertEqual({"10.20.2.0/24", "10.20.3.0/24"},
                         {self.driver.allocate("n-%d" % i, scope="r")
                          for i in range(2)})

    def test_import_is_idempotent(self):
        batch = [_alloc("a", "10.20.0.0/24"), _alloc("b", "10.20.1.0/24")]
        self.assertEqual(2, len(self.driver.import_allocations(batch)))
        self.assertEqual([], self.driver.import_allocations(batch))
        self.assertEqual([], self.driver.import_allocations(batch[:1] * 2))
        self.assertEqual(2, len(self.driver.list()))

    def test_conflicts_write_nothing(self):
        self.driver.import_allocations([_alloc("a", "10.20.0.0/24")])
        before = self.snapshot()
        cases = [
            (exceptions.OwnerConflict,
             [_alloc("z", "10.20.3.0/24"), _alloc("a", "10.20.2.0/24")]),
            (exceptions.OwnerConflict,
             [_alloc("y", "10.20.2.0/24"), _alloc("y", "10.20.3.0/24")]),
            (errors.AllocationConflict,
             [_alloc("z", "10.20.3.0/24"), _alloc("x", "10.20.0.128/25")]),
            (errors.AllocationConflict,
             [_alloc("z", "10.20.2.0/23"), _alloc("x", "10.20.3.0/24")]),
            (errors.AllocationConflict,
             [_alloc("z", "10.20.0.0/16")]),
            (exceptions.InvalidArgument,
             [_alloc("z", "10.20.3.0/24"), _alloc("", "10.20.2.0/24")]),
            (exceptions.InvalidArgument,
             [_alloc("z", "10.20.3.0/24"), _alloc("x", "fd00::/64")]),
            (exceptions.InvalidArgument,
             [_alloc("z", "10.20.3.0/24"), _alloc("x", "nope")]),
            (exceptions.InvalidArgument, [object()]),
        ]
        for error, batch in cases:
            self.assertRaises(error, self.driver.import_allocations, batch)
            self.assertEqual(before, self.snapshot())

    def test_other_scopes_and_no_scope_do_not_conflict(self):
        new = self.driver.import_allocations([
            _alloc("a", "10.20.0.0/24"), _alloc("b", "10.20.0.0/24", "r2"),
            _alloc("c", "10.20.0.0/24", None), _alloc("d", "10.20.0.0/16",
                                                      None)])
        self.assertEqual(4, len(new))


class TestImportStream(base.DbTestCase):
    """import_stream: one transaction, a part of the stream at a time."""

    def setUp(self):
        super().setUp()
        self.driver = self.make_driver()
        # Parts of two, so that every batch below spans several.
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.operator.drivers.db.bulk_import.BATCH", 2))
        self.driver.import_allocations([_alloc("held", "10.20.9.0/24")])
        self.before = self.snapshot()

    def snapshot(self):
        return sorted((a.owner, a.cidr, a.scope) for a in self.driver.list())

    def batch(self, last):
        return [_alloc("n%d" % i, "10.20.%d.0/24" % i) for i in range(6)] + [
            last]

    def test_records_every_part_and_counts_the_new(self):
        batch = self.batch(_alloc("held", "10.20.9.0/24"))
        self.assertEqual(6, self.driver.import_stream(lambda: batch))
        self.assertEqual(7, len(self.driver.list()))
        # Again, and an owner twice in different parts: nothing new.
        self.assertEqual(0, self.driver.import_stream(
            lambda: batch + batch[:1]))

    def test_a_late_conflict_writes_nothing(self):
        for error, last in (
                (errors.AllocationConflict,
                 _alloc("late", "10.20.9.128/25")),
                (errors.AllocationConflict,
                 _alloc("late", "10.20.0.0/23")),
                (exceptions.OwnerConflict, _alloc("n0", "10.20.7.0/24")),
                (exceptions.OwnerConflict, _alloc("held", "10.20.8.0/24")),
                (exceptions.InvalidArgument, _alloc("", "10.20.8.0/24"))):
            batch = self.batch(last)
            self.assertRaises(error, self.driver.import_stream,
                              lambda: batch)
            self.assertEqual(self.before, self.snapshot())


class TestServerClock(base.DbTestCase):

    def test_now_is_the_clock_of_the_rows(self):
        driver = self.make_driver()
        self.addCleanup(driver.close)
        driver.allocate("a", scope="r")
        self.assertTrue(driver.release("a"))
        with fixtures.MockPatch(
                "murano_cidr.engine.drivers.base.datetime") as host_clock:
            now = driver.now()
        # Not the host's clock (which the base class reads).
        host_clock.mock.datetime.now.assert_not_called()
        self.assertEqual(datetime.timezone.utc, now.tzinfo)
        released = driver.list_released()[0].released_at
        self.assertLessEqual(released, now)
