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

"""The db driver on SQLite, beyond the shared driver contract."""

import datetime
import os
import random
import sqlite3
import sys
from unittest import mock

import fixtures
import netaddr
from oslo_config import cfg
from oslo_config import fixture as config_fixture
from oslo_db import exception as db_exc
from oslo_db import options as db_options
import sqlalchemy as sa

from murano_cidr.engine import allocation as allocation_mod
from murano_cidr.engine import allocator
from murano_cidr.engine.drivers import capabilities as caps
from murano_cidr.engine.drivers.db import allocating
from murano_cidr.engine.drivers.db import compat
from murano_cidr.engine.drivers.db import connection
from murano_cidr.engine.drivers.db import driver as db_driver
from murano_cidr.engine.drivers.db import options as cidr_db_options
from murano_cidr import exceptions
from murano_cidr.measuring.bench import counting
from murano_cidr.operator.drivers import commands
from murano_cidr.operator.drivers.db import migration
from murano_cidr import opts
from murano_cidr.tests import round_trips
from murano_cidr.tests.unit.drivers.db import base


def _alloc(owner, cidr, scope="r", ip_version=4, **kwargs):
    return allocation_mod.Allocation(owner=owner, cidr=cidr, scope=scope,
                                     ip_version=ip_version, **kwargs)


class TestAllocate(base.DbTestCase):

    def setUp(self):
        super().setUp()
        self.driver = self.make_driver()

    def rows(self):
        with self.driver.database.engine.connect() as conn:
            return conn.execute(
                compat.select(allocating.ALLOCATIONS)).fetchall()

    def generation(self, scope):
        with self.driver.database.engine.connect() as conn:
            scopes = allocating.SCOPES
            return conn.execute(compat.select(scopes.c.generation).where(
                scopes.c.scope == scope)).scalar()

    def test_capabilities(self):
        self.assertTrue(self.driver.has(caps.Capability.KEEPS_STATE))
        self.assertTrue(self.driver.has(caps.Capability.PREVENTS_COLLISIONS))
        self.assertFalse(self.driver.has(caps.Capability.HOLDS_RESERVATIONS))

    def test_allocation_is_recorded_unconfirmed_then_confirmed(self):
        before = datetime.datetime.now(datetime.timezone.utc).replace(
            microsecond=0)
        cidr = self.driver.allocate("net-1", scope="r")
        held = self.driver.get("net-1")
        self.assertEqual((cidr, "r", 4, False),
                         (held.cidr, held.scope, held.ip_version,
                          held.confirmed))
        self.assertEqual(datetime.timezone.utc, held.created_at.tzinfo)
        self.assertLessEqual(before, held.created_at)
        self.driver.confirm("net-1")
        self.assertTrue(self.driver.get("net-1").confirmed)

    def test_confirm_unknown_owner_changes_nothing(self):
        self.driver.confirm("nobody")
        self.assertEqual([], self.rows())

    def reclaim(self, owner):
        """Delete the row of ``owner``, as a reclaim does."""
        with self.driver.database.engine.begin() as conn:
            allocating.delete(conn, owner)

    def test_a_late_confirm_raises_in_the_process_that_allocated(self):
        cidr = self.driver.allocate("net-1", scope="r")
        other = self.make_driver()  # another engine worker
        self.reclaim("net-1")
        log = self.useFixture(fixtures.FakeLogger(name=db_driver.__name__))
        # The database says the owner holds nothing; the worker that
        # allocated knows what it had, another worker only that.
        other.confirm("net-1")
        self.assertIn("owner net-1, which holds none", log.output)
        e = self.assertRaises(exceptions.ReservationLost,
                              self.driver.confirm, "net-1")
        self.assertEqual((cidr, "net-1"),
                         (e.kwargs["cidr"], e.kwargs["owner"]))
        self.assertEqual([], self.rows())

    def test_a_late_confirm_does_not_confirm_another_cidr(self):
        # Reclaimed, then the owner got another CIDR in another worker:
        # the reservation this worker confirms is not the owner's any more.
        cidr = self.driver.allocate("net-1", scope="r")
        self.reclaim("net-1")
        again = self.make_driver().allocate("net-1", scope="r", taken=[cidr])
        self.assertNotEqual(cidr, again)
        e = self.assertRaises(exceptions.ReservationLost,
                              self.driver.confirm, "net-1")
        self.assertEqual(cidr, e.kwargs["cidr"])
        self.assertFalse(self.driver.get("net-1").confirmed)

    def test_each_allocation_moves_the_scope_generation(self):
        self.assertIsNone(self.generation("r"))
        self.driver.allocate("net-1", scope="r")
        first = self.generation("r")
        self.assertIsNotNone(first)
        self.driver.allocate("net-2", scope="r")
        self.assertEqual(first + 1, self.generation("r"))

    def test_release_scope_forgets_the_scope(self):
        self.driver.allocate("net-1", scope="r")
        self.driver.allocate("net-2", scope="r")
        self.driver.allocate("net-3", scope="r2")
        before = self.generation("r")
        self.assertEqual(2, self.driver.release_scope("r"))
        self.assertEqual(["net-3"], [row.owner for row in self.rows()])
        # The scope's row stays, locked and moved on like an allocation's.
        self.assertEqual(before + 1, self.generation("r"))
        self.assertEqual(0, self.driver.release_scope("unknown"))
        self.assertIsNone(self.generation("unknown"))

    def test_owner_in_another_scope_is_a_conflict(self):
        cidr = self.driver.allocate("net-1", scope="r1")
        e = self.assertRaises(exceptions.OwnerConflict,
                              self.driver.allocate, "net-1", scope="r2")
        self.assertIn(cidr, str(e))
        self.assertEqual(1, len(self.rows()))

    def test_held_cidr_is_returned_even_when_now_taken(self):
        cidr = self.driver.allocate("net-1", scope="r")
        self.assertEqual(cidr, self.driver.allocate(
            "net-1", scope="r", taken=["10.0.0.0/8"]))

    def test_owners_differing_in_case_are_two_owners(self):
        a = self.driver.allocate("Net-1", scope="r")
        b = self.driver.allocate("net-1", scope="r")
        self.assertNotEqual(a, b)

    def test_white_space_around_owner_or_scope_is_refused(self):
        for owner, scope in (("net-1 ", "r"), (" net-1", "r"),
                             ("net-1", "r ")):
            self.assertRaises(exceptions.InvalidArgument,
                              self.driver.allocate, owner, scope=scope)
        self.assertEqual([], self.rows())

    def test_odd_scopes_are_kept_exactly(self):
        scopes = ["router/1", "r\u00e9seau", "R", "r", "a b", "x" * 255,
                  "'; DROP TABLE murano_cidr_allocations; --"]
        for i, scope in enumerate(scopes):
            self.driver.allocate("net-%d" % i, scope=scope)
        self.assertEqual(sorted(scopes),
                         sorted(a.scope for a in self.driver.list()))
        for i, scope in enumerate(scopes):
            self.assertEqual(["net-%d" % i],
                             [a.owner for a in self.driver.list(scope)])

    def test_callable_taken_is_read_on_every_attempt(self):
        calls = []
        real = allocating.insert_if_free

        def deadlock_once(conn, *args, **kwargs):
            if len(calls) == 1:
                raise db_exc.DBDeadlock()
            return real(conn, *args, **kwargs)

        def taken():
            calls.append(1)
            return ["10.20.0.0/24"]

        self.useFixture(fixtures.MonkeyPatch(
            "murano_cidr.engine.drivers.db.allocating.insert_if_free",
            deadlock_once))
        cidr = self.driver.allocate("net-1", scope="r", taken=taken)
        self.assertEqual(2, len(calls))
        self.assertNotEqual("10.20.0.0/24", cidr)
        self.assertEqual(1, len(self.rows()))

    def test_deadlocks_give_up_with_a_clear_error_and_no_row(self):
        self.db_config(db_max_retries=2)
        driver = self.make_driver()
        real = allocating.lock_scope

        def deadlock(conn, scope):
            real(conn, scope)
            raise db_exc.DBDeadlock()

        self.useFixture(fixtures.MonkeyPatch(
            "murano_cidr.engine.drivers.db.allocating.lock_scope", deadlock))
        e = self.assertRaises(exceptions.DatabaseUnavailable,
                              driver.allocate, "net-1", scope="r")
        self.assertIn("ran out of retries or time", str(e))
        self.assertIn("db_max_retries = 2,", str(e))
        self.assertEqual([], self.rows())
        self.assertIsNone(self.generation("r"))

    def _locked(self, times):
        """Make the scope lock meet a locked SQLite file ``times`` times."""
        for name in ("RETRY_INTERVAL", "MAX_RETRY_INTERVAL"):
            self.useFixture(fixtures.MonkeyPatch(
                "murano_cidr.engine.drivers.db.api." + name, 0.001))
        real = allocating.lock_scope
        calls = []

        def locked(conn, scope, create=True):
            calls.append(1)
            if len(calls) <= times:
                raise sa.exc.OperationalError(
                    "UPDATE", {}, Exception("database is locked"))
            return real(conn, scope, create)

        self.useFixture(fixtures.MonkeyPatch(
            "murano_cidr.engine.drivers.db.allocating.lock_scope", locked))
        return calls

    def test_a_locked_sqlite_file_is_waited_for_past_db_max_retries(self):
        # Another process writing the file is no lost race: the call
        # tries again until call_timeout, however few db_max_retries are.
        self.db_config(db_max_retries=2)
        driver = self.make_driver()
        calls = self._locked(30)
        self.assertIsNotNone(driver.allocate("net-1", scope="r"))
        self.assertEqual(31, len(calls))

    def test_a_locked_sqlite_file_ends_the_call_at_call_timeout(self):
        self.db_config(db_max_retries=2, call_timeout=1)
        driver = self.make_driver()
        self._locked(10 ** 9)
        e = self.assertRaises(exceptions.DatabaseUnavailable,
                              driver.allocate, "net-1", scope="r")
        self.assertIn("kept the SQLite file locked past call_timeout",
                      str(e))
        self.assertEqual([], self.rows())

    def test_no_retry_at_all_with_db_max_retries_0(self):
        self.db_config(db_max_retries=0)
        driver = self.make_driver()
        calls = self._locked(1)
        self.assertRaises(exceptions.DatabaseUnavailable, driver.allocate,
                          "net-1", scope="r")
        self.assertEqual(1, len(calls))

    def test_duplicate_keys_are_retried(self):
        real = allocating.insert_if_free
        calls = []

        def duplicate_once(conn, values):
            calls.append(1)
            if len(calls) == 1:
                raise db_exc.DBDuplicateEntry(columns=["owner"])
            return real(conn, values)

        self.useFixture(fixtures.MonkeyPatch(
            "murano_cidr.engine.drivers.db.allocating.insert_if_free",
            duplicate_once))
        self.driver.allocate("net-1", scope="r")
        self.assertEqual(2, len(calls))
        self.assertEqual(1, len(self.rows()))

    def test_no_scope_allows_overlaps_but_respects_taken(self):
        cidrs = [self.driver.allocate("net-%d" % i,
                                      taken=["10.20.0.0/23"])
                 for i in range(6)]
        self.assertLessEqual(set(cidrs), {"10.20.2.0/24", "10.20.3.0/24"})
        self.assertIsNone(self.generation(None))
        usage = self.driver.usage(scope=None)
        held = len(set(cidrs))
        self.assertEqual((6, held, 4 - held), (usage["allocations"],
                                               usage["allocated"],
                                               usage["free"]))

    def test_mixed_geometry_never_overlaps(self):
        small = self.make_driver(subnet_prefixlen=24)
        large = self.make_driver(subnet_prefixlen=23)
        cidrs = []
        for i in range(4):
            for name, driver in (("s", small), ("l", large)):
                try:
                    cidrs.append(driver.allocate("%s-%d" % (name, i),
                                                 scope="r"))
                except exceptions.PoolExhausted:
                    pass
        nets = sorted(netaddr.IPNetwork(c) for c in cidrs)
        for a, b in zip(nets, nets[1:]):
            self.assertLess(a.last, b.first)
        self.assertEqual(1024, sum(n.size for n in nets))

    def test_search_finds_the_last_free_candidate_of_a_big_pool(self):
        driver = self.make_driver(pool_cidrs=["10.0.0.0/16",
                                              "172.16.0.0/20"])
        pool = driver.pool()
        free = [17, 200, pool.size - 1]
        driver.import_allocations(
            [_alloc("o-%d" % i, pool.cidr(i)) for i in range(pool.size)
             if i not in free])
        got = {driver.allocate("n-%d" % i, scope="r") for i in range(3)}
        self.assertEqual({pool.cidr(i) for i in free}, got)
        e = self.assertRaises(exceptions.PoolExhausted, driver.allocate,
                              "n-4", scope="r")
        self.assertIn("%d allocated, 0 taken" % pool.size, str(e))

    def spy_reads(self):
        """Count the rows each read of the driver returns, by query."""
        seen = []
        full = []
        for module, name in ((allocating, "read_window"),
                             (allocating, "get"),
                             (allocating, "read_scope")):
            real = getattr(module, name)

            def spy(*args, _real=real, _name=name, **kwargs):
                if _name == "read_scope":
                    full.append(1)
                    try:
                        seen.append((_name, 1))
                        return _real(*args, **kwargs)
                    finally:
                        full.pop()
                result = _real(*args, **kwargs)
                if not full:
                    rows = result[0] if _name == "read_window" else result
                    seen.append((_name, 0 if rows is None else
                                 1 if _name == "get" else len(rows)))
                return result

            self.useFixture(fixtures.MonkeyPatch(
                "%s.%s" % (module.__name__, name), spy))
        return seen

    def fill(self, driver, scope, indices):
        pool = driver.pool()
        driver.import_allocations([_alloc("%s-%d" % (scope, i),
                                          pool.cidr(i), scope=scope)
                                   for i in indices])

    def test_rows_read_do_not_grow_with_fill_or_layout(self):
        driver = self.make_driver(pool_cidrs=["10.0.0.0/12"])
        size = driver.pool().size
        rng = random.Random(1502437)
        layouts = {"packed": range(size * 9 // 10),
                   "random": rng.sample(range(size), size * 9 // 10)}
        for scope, indices in layouts.items():
            self.fill(driver, scope, indices)
            driver.allocate("warm-up-" + scope, scope=scope)
        seen = self.spy_reads()
        for scope in layouts:
            for i in range(20):
                with counting.counting(driver.database.engine) as counter:
                    driver.allocate("%s-new-%d" % (scope, i), scope=scope)
                # No ping: SQLite's writers keep their connection.
                self.assertEqual(round_trips.ALLOCATE["sqlite"],
                                 [s for s in counter.statements
                                  if s != "BEGIN"])
        # One engine: its hint is exact, nothing is read.
        self.assertEqual([], seen)
        usage = driver.usage("packed")
        self.assertEqual(size * 9 // 10 + 21, usage["allocated"])

    def test_another_engine_s_rows_cost_a_few_windows(self):
        mine = self.make_driver(pool_cidrs=["10.0.0.0/16"])
        other = self.make_driver(pool_cidrs=["10.0.0.0/16"])
        mine.allocate("warm-up", scope="r")
        cidrs = [other.allocate("other-%d" % i, scope="r")
                 for i in range(200)]
        seen = self.spy_reads()
        for i in range(60):
            del seen[:]
            try:
                cidrs.append(mine.allocate("mine-%d" % i, scope="r"))
            except exceptions.PoolExhausted:
                break
            full = [r for n, r in seen if n == "read_scope"]
            windows = [r for n, r in seen if n == "read_window"]
            self.assertLessEqual(len(windows), allocating.MAX_MISSES, seen)
            self.assertLessEqual(len(full), 1)
            self.assertLessEqual(max(windows or [0]), allocating.WINDOW)
        # Every candidate but the warm-up's, none twice: nothing missed.
        self.assertEqual(255, len(set(cidrs)))
        self.assertRaises(exceptions.PoolExhausted, mine.allocate, "late",
                          scope="r")

    def test_a_cidr_freed_by_another_engine_is_found(self):
        # No grace period: a released CIDR off the router is free to an
        # allocation that starts a second after the release.
        mine = self.make_driver(release_grace=0)
        other = self.make_driver(release_grace=0)
        held = [mine.allocate("net-%d" % i, scope="r") for i in range(4)]
        self.assertRaises(exceptions.PoolExhausted, mine.allocate, "net-4",
                          scope="r")
        other.release("net-2")
        # The summary still says full; the scope is read again, and the
        # CIDR released elsewhere is found.
        self.assertEqual(held[2], mine.allocate("net-4", scope="r"))
        e = self.assertRaises(exceptions.PoolExhausted, mine.allocate,
                              "net-5", scope="r")
        self.assertIn("4 allocated, 0 taken", str(e))

    def test_the_owner_s_cidr_is_returned_by_a_stale_engine(self):
        mine = self.make_driver()
        other = self.make_driver()
        mine.allocate("warm-up", scope="r")
        cidr = other.allocate("net-1", scope="r")
        self.assertEqual(cidr, mine.allocate("net-1", scope="r"))
        self.assertEqual(2, len(self.rows()))

    def test_usage_counts_mixed_geometry(self):
        self.driver.import_allocations([
            _alloc("a", "10.20.0.0/23"), _alloc("b", "10.20.3.128/25"),
            _alloc("c", "192.168.0.0/24")])
        usage = self.driver.usage("r")
        self.assertEqual((3, 3, 1), (usage["allocations"],
                                     usage["allocated"], usage["free"]))

    def test_live_allocations_are_read_page_by_page(self):
        self.useFixture(fixtures.MockPatch(
            "murano_cidr.operator.drivers.db.records.PAGE", 2))
        for n in range(5):
            self.driver.allocate("net-%d" % n, scope="r%d" % (n % 2))
        self.driver.release("net-1")
        live = self.driver.live_allocations()
        self.assertEqual("net-0", next(live).owner)
        self.assertEqual(["net-2", "net-3", "net-4"],
                         [a.owner for a in live])

    def test_list_is_sorted(self):
        self.driver.allocate("b", scope="r2")
        self.driver.allocate("a", scope="r1")
        self.driver.allocate("c")
        self.assertEqual([None, "r1", "r2"],
                         [a.scope for a in self.driver.list()])


class TestErrors(base.DbTestCase):

    def test_not_synced(self):
        self.db_config(connection="sqlite:///" + self.db_path + ".empty")
        driver = self.make_driver()
        for call in (lambda: driver.allocate("n", scope="r"),
                     lambda: driver.get("n"), lambda: driver.list(),
                     lambda: driver.release("n")):
            e = self.assertRaises(exceptions.DatabaseNotSynced, call)
            self.assertIn("murano-cidr-manage", str(e))
            self.assertIn("db sync", str(e))

    def test_not_synced_names_the_engine_s_files(self):
        # Issue 32: an engine's hint said "--config-file <file>" where the
        # engine had read Murano's file.
        path = os.path.join(self.state_path, "murano.conf")
        with open(path, "w") as f:
            f.write("[DEFAULT]\n")
        self.conf(["--config-file", path])
        empty = self.db_path + ".empty"
        for exists in (False, True):
            if exists:
                sqlite3.connect(empty).close()
            self.db_config(connection="sqlite:///" + empty)
            driver = self.make_driver()
            e = self.assertRaises(exceptions.DatabaseNotSynced,
                                  driver.allocate, "n", scope="r")
            self.assertIn("run 'murano-cidr-manage --config-file %s db "
                          "sync' first" % path, str(e))

    def test_unreachable_database_names_url_without_password(self):
        # NOTE: max_retries=0: no wait for the server, which oslo.db
        # applies when it sees the refusal as a connection error (libpq
        # 13's wording, Xena's psycopg2; not libpq 14's).
        self.db_config(connection="postgresql+psycopg2://user:s3cret@"
                       "127.0.0.1:1/murano", db_max_retries=1,
                       max_retries=0)
        driver = self.make_driver()
        e = self.assertRaises(exceptions.DatabaseUnavailable,
                              driver.allocate, "n", scope="r")
        self.assertIn("user:***@127.0.0.1:1/murano", str(e))
        self.assertNotIn("s3cret", str(e))

    def test_only_sqlite_serves_one_host(self):
        self.assertIn("the SQLite database sqlite:///",
                      self.make_driver().single_host_store)
        self.db_config(connection="postgresql+psycopg2://user:s3cret@"
                       "127.0.0.1:1/murano")
        self.assertIsNone(self.make_driver().single_host_store)

    def test_bad_url_fails_when_the_driver_is_built(self):
        for url in ("nonsense", "nosuchdb://x/y"):
            self.db_config(connection=url)
            e = self.assertRaises(exceptions.InvalidConfig, self.make_driver)
            self.assertIn("[cidr_allocator_database] connection", str(e))

    def test_missing_python_driver_is_a_config_error(self):
        # NOTE: imported with PyMySQL first: imported under the patch, the
        # module would keep no PyMySQL (and check no charset) for the tests
        # that run after this one in the process, since the package keeps
        # it as an attribute once the patch has dropped it from sys.modules.
        from murano_cidr.engine.drivers.db import mysql  # noqa: F401
        # None in sys.modules makes "import pymysql" fail.
        patcher = mock.patch.dict(sys.modules, {"pymysql": None})
        patcher.start()
        self.addCleanup(patcher.stop)
        self.db_config(connection="mysql+pymysql://u:p@127.0.0.1/x")
        driver = self.make_driver()
        e = self.assertRaises(exceptions.InvalidConfig, driver.allocate, "n")
        self.assertIn("murano-cidr[mysql]", str(e))

    def test_default_database_is_a_file_under_state_path(self):
        conf = cfg.ConfigOpts()
        commands.register_opts(conf)
        conf.set_override("state_path", self.state_path + "/new/dir",
                          group=opts.GROUP)
        url = connection.connection_url(conf)
        self.assertEqual("sqlite:///%s/new/dir/murano-cidr.sqlite"
                         % self.state_path, url)
        self.assertFalse(os.path.exists(self.state_path + "/new"))

    def test_unwritable_state_path_is_a_config_error(self):
        conf = cfg.ConfigOpts()
        commands.register_opts(conf)
        blocker = self.state_path + "/file"
        open(blocker, "w").close()
        conf.set_override("state_path", blocker + "/dir", group=opts.GROUP)
        # db sync makes the directory; the driver never does (before
        # db sync there is nothing for it to read).
        e = self.assertRaises(exceptions.InvalidConfig, migration.upgrade,
                              conf)
        self.assertIn("state_path", str(e))
        driver = allocator.get_allocator(conf)
        self.addCleanup(driver.close)
        e = self.assertRaises(exceptions.DatabaseNotSynced, driver.list)
        self.assertIn("does not exist yet", str(e))

    def test_the_service_database_group_is_not_read(self):
        cfg.CONF.register_opts(db_options.database_opts, group="database")
        self.useFixture(config_fixture.Config(cfg.CONF)).config(
            group="database", slave_connection="sqlite:///" + self.db_path
            + ".elsewhere", connection="sqlite:///" + self.db_path
            + ".elsewhere")
        driver = self.make_driver()
        cidr = driver.allocate("n", scope="r")
        self.assertEqual(cidr, driver.get("n").cidr)
        with self.database.engine.connect() as conn:
            self.assertEqual([("n", cidr)], conn.execute(sa.text(
                "SELECT owner, cidr FROM murano_cidr_allocations")).fetchall())
        self.assertFalse(os.path.exists(self.db_path + ".elsewhere"))

    def test_configuration_objects_do_not_share_values(self):
        other = cfg.ConfigOpts()
        commands.register_opts(other)
        self.assertIsNone(other[cidr_db_options.GROUP].connection)
        self.assertNotEqual(self.state_path, other[opts.GROUP].state_path)
