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

"""Reservation records: the logic, the file store and the exhaustion text."""

import os

import fixtures

from murano_cidr.engine.drivers.lock import driver as lock_driver
from murano_cidr.engine.drivers.lock import file_service
from murano_cidr.engine.drivers.lock import picking
from murano_cidr.tests import base
from murano_cidr.tests.unit.drivers import memory_records

NOW = 1800000000.0
HOLD = 60


def _record(owner="net-1", cidr="10.0.0.0/24", created=NOW, hold=HOLD):
    return picking.Record.new(owner, "r", cidr, hold,
                              clock=lambda: created)


class TestRecord(base.TestCase):

    def test_bytes_round_trip(self):
        record = _record()
        again = picking.Record.decode(record.encode())
        self.assertEqual(record.encode(), again.encode())
        self.assertEqual(("net-1", "r", "10.0.0.0/24", NOW + HOLD),
                         (again.owner, again.scope, again.cidr,
                          again.expires))

    def test_each_reservation_has_its_own_token(self):
        self.assertNotEqual(_record().token, _record().token)

    def test_an_unknown_layout_is_none(self):
        for data in (b"", b"{}", b"[1]", b"\xff"):
            self.assertIsNone(picking.Record.decode(data), data)

    def test_live_until_it_expires(self):
        record = _record()
        self.assertTrue(record.live(clock=lambda: NOW + HOLD - 0.001))
        self.assertFalse(record.live(clock=lambda: NOW + HOLD))


class StoreTests(object):
    """What every store must do (a mixin); :meth:`make_store` makes one."""

    def test_create_only_where_nothing_is(self):
        store = self.make_store()
        self.assertEqual((None, None), store.read("a"))
        self.assertTrue(store.create("a", b"one", None, HOLD))
        self.assertFalse(store.create("a", b"two", None, HOLD))
        self.assertEqual(b"one", store.read("a")[0])

    def test_replace_only_what_was_read(self):
        store = self.make_store()
        store.create("a", b"one", None, HOLD)
        _data, version = store.read("a")
        self.assertTrue(store.create("a", b"two", version, HOLD))
        self.assertFalse(store.create("a", b"three", version, HOLD))
        self.assertEqual(b"two", store.read("a")[0])

    def test_delete_only_its_own(self):
        store = self.make_store()
        store.create("a", b"one", None, HOLD)
        self.assertFalse(store.delete("a", b"other"))
        self.assertTrue(store.delete("a", b"one"))
        self.assertFalse(store.delete("a", b"one"))
        self.assertEqual((None, None), store.read("a"))


class TestMemoryRecords(StoreTests, base.TestCase):

    def make_store(self):
        return memory_records.MemoryRecords()


class TestFileRecords(StoreTests, base.TestCase):

    def make_store(self):
        self.path = self.useFixture(fixtures.TempDir()).path
        return file_service.FileRecords(self.path, "file locks")

    def test_no_temporary_file_is_left(self):
        store = self.make_store()
        store.create("a", b"one", None, HOLD)
        store.create("a", b"two", store.read("a")[1], HOLD)
        self.assertEqual(["a.json"], sorted(
            n for n in os.listdir(self.path) if n.startswith("a.")))


class TestClaim(base.TestCase):

    def setUp(self):
        super().setUp()
        self.store = memory_records.MemoryRecords()
        self.clock = self.useFixture(fixtures.MockPatch(
            "murano_cidr.engine.drivers.lock.picking.time.time",
            return_value=NOW))

    def claim(self, record):
        return picking.claim(self.store, "b", record, record.encode())

    def test_a_free_block(self):
        record = _record()
        self.assertIsNone(self.claim(record))
        self.assertEqual(record.encode(), self.store.read("b")[0])

    def test_a_live_record_is_in_the_way(self):
        first = _record()
        self.claim(first)
        other = self.claim(_record("net-2"))
        self.assertEqual((first.owner, first.token),
                         (other.owner, other.token))
        self.assertEqual(first.encode(), self.store.read("b")[0])

    def test_an_expired_record_is_replaced(self):
        self.claim(_record(created=NOW - HOLD))
        record = _record("net-2")
        self.assertIsNone(self.claim(record))
        self.assertEqual(record.encode(), self.store.read("b")[0])

    def test_a_store_that_expires_records_itself_is_trusted(self):
        # Redis and etcd drop a record at its expiry by their own clock:
        # one they still have is live, whatever this host's clock says.
        self.store.expires_itself = True
        self.claim(_record(created=NOW - HOLD))
        self.assertEqual("net-1", self.claim(_record("net-2")).owner)

    def test_an_unreadable_record_is_in_the_way(self):
        self.store.create("b", b"not ours", None, HOLD)
        self.assertEqual("?", self.claim(_record()).owner)
        self.assertEqual(b"not ours", self.store.read("b")[0])


class TestOwnerIndex(base.TestCase):

    def setUp(self):
        super().setUp()
        self.store = memory_records.MemoryRecords()

    def reserve(self, owner, names):
        record = picking.Record.new(owner, "r", "10.0.0.0/23", HOLD)
        for name in names:
            self.assertIsNone(picking.claim(self.store, name, record,
                                            record.encode()))
        reservation = picking.RecordReservation(self.store, names, record)
        picking.write_index(self.store, reservation)
        return reservation

    def test_any_process_releases_through_the_index(self):
        self.reserve("net-1", ["b1", "b2"])
        self.reserve("net-2", ["b3"])
        self.assertTrue(picking.release(self.store, "net-1"))
        self.assertEqual(["b3", picking.index_name("net-2")],
                         sorted(self.store.data))
        self.assertFalse(picking.release(self.store, "net-1"))

    def test_a_release_after_a_takeover_frees_nothing_of_another(self):
        self.reserve("net-1", ["b1"])
        # Expired, and reserved by net-2 since.
        self.store.data["b1"] = b"net-2's"
        self.assertFalse(picking.release(self.store, "net-1"))
        self.assertEqual({"b1": b"net-2's"}, self.store.data)

    def test_confirmed_reservations_leave_nothing(self):
        reservation = self.reserve("net-1", ["b1"])
        self.assertTrue(reservation.release_checked())
        picking.drop_index(self.store, reservation)
        self.assertEqual({}, self.store.data)

    def test_an_unreadable_index_frees_nothing(self):
        self.store.create(picking.index_name("net-1"), b"?", None, 1)
        self.assertFalse(picking.release(self.store, "net-1"))

    def test_an_expired_index_of_the_owner_is_replaced(self):
        clock = self.useFixture(fixtures.MockPatch(
            "murano_cidr.engine.drivers.lock.picking.time.time",
            return_value=NOW - 2 * HOLD)).mock
        self.reserve("net-1", ["b1"])
        clock.return_value = NOW
        self.reserve("net-1", ["b2"])
        self.assertTrue(picking.release(self.store, "net-1"))
        self.assertEqual(["b1"], sorted(self.store.data))

    def test_a_live_index_of_the_owner_stays(self):
        self.reserve("net-1", ["b1"])
        self.reserve("net-1", ["b2"])
        self.assertTrue(picking.release(self.store, "net-1"))
        self.assertEqual(["b2"], sorted(self.store.data))


class TestDescribe(base.TestCase):

    def test_nothing_recorded(self):
        self.assertEqual("", lock_driver.describe([], set(), HOLD))

    def test_who_holds_since_when_until_when(self):
        records = [_record("a", created=NOW - 30), _record("b")]
        text = lock_driver.describe(records, {"b"}, HOLD, now=NOW)
        self.assertEqual(
            "; 2 held by unconfirmed reservations (1 by this engine "
            "process), the oldest made 30 s ago, at 2027-01-15 07:59:30 "
            "UTC; the first drops at 2027-01-15 08:00:30 UTC. A reservation "
            "drops when its engine confirms it, when any engine process "
            "releases its owner (a delete of the deployment, on any "
            "engine), or reservation_timeout = 60 s after it was made, "
            "whether or not its engine lives; its CIDR is then handed out "
            "again only if the router shows no subnet overlapping it", text)
