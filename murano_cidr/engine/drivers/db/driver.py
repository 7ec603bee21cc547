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

"""The ``db`` driver: CIDRs pre-allocated in an SQL table.

Guaranteed: no two live allocations of a scope overlap, and an owner never
holds two CIDRs, whatever the number of engines, hosts or pool settings;
the database decides (:mod:`.allocating`). A full pool's error says what
the scope holds back (:func:`hold_back`). How: ``doc/source/reference/
db-driver.rst``.
"""

import collections
import datetime
import threading

from oslo_log import log as logging
import sqlalchemy as sa

from murano_cidr._i18n import _

from murano_cidr.engine import allocation as allocation_mod
from murano_cidr.engine.drivers import base
from murano_cidr.engine.drivers import capabilities as caps
from murano_cidr.engine.drivers import db as db_package
from murano_cidr.engine.drivers.db import allocating
from murano_cidr.engine.drivers.db import api
from murano_cidr.engine.drivers.db import compat
from murano_cidr.engine.drivers.db import hints
from murano_cidr.engine.drivers.db import models
from murano_cidr.engine.drivers.db import options as db_options
from murano_cidr.engine import taken as taken_mod
from murano_cidr import exceptions
from murano_cidr import messages
from murano_cidr import opts

LOG = logging.getLogger(__name__)


class DbDriver(base.AllocatorDriver):
    """Allocations kept in SQL, with overlaps excluded by the database.

    Its database is ``[cidr_allocator_database] connection`` (unset: an
    SQLite file under ``state_path``, one host only), made by
    ``murano-cidr-manage db sync`` (else ``DatabaseNotSynced``). Two live
    allocations of a scope never overlap, across processes and hosts; any
    process may confirm or release what another allocated. One never
    confirmed is reclaimed after ``reservation_timeout`` (its late
    ``confirm`` raises ``ReservationLost``). :doc:`/reference/db-driver`.
    """

    name = "db"
    capabilities = frozenset({caps.Capability.KEEPS_STATE,
                              caps.Capability.SHARES_STATE,
                              caps.Capability.OUTLIVES_PROCESS,
                              caps.Capability.PREVENTS_COLLISIONS,
                              caps.Capability.IMPORTS,
                              caps.Capability.HOLDS_RELEASED})
    extras = db_package.EXTRAS
    #: Owners whose CIDR a driver remembers until confirmed (oldest go).
    max_unconfirmed = 1024

    @classmethod
    def list_opts(cls):
        return db_options.list_opts()

    def __init__(self, conf):
        super().__init__(conf)
        self.database = api.Database(conf,
                                     schema_check=check_schema)
        #: Which candidates to try first, by scope: never what decides.
        self.hints = hints.Hints()
        #: ``(release_grace, reservation_timeout)``, in seconds.
        self.ages = (conf[opts.GROUP].release_grace,
                     conf[opts.GROUP].reservation_timeout)
        self.release_grace = datetime.timedelta(seconds=self.ages[0])
        #: What this process allocated, by owner, until confirmed: which
        #: CIDR confirm expects the owner to hold, and names if it does not.
        self.unconfirmed = collections.OrderedDict()
        self.guard = threading.Lock()

    shared_store_option = ("[cidr_allocator_database] connection (a "
                           "MySQL/MariaDB or PostgreSQL database)")

    @property
    def single_host_store(self):
        """The SQLite database, which serves one host; None otherwise."""
        if self.database.backend == "sqlite":
            return "the SQLite database %s" % self.database.safe_url
        return None

    def allocate(self, owner, scope=None, taken=(), ip_version=4):
        """Allocate a CIDR for ``owner`` (see :mod:`.base`).

        A callable ``taken`` is read under the scope's lock, on every attempt.

        :returns: the CIDR; the one ``owner`` already holds, if any.
        :raises murano_cidr.exceptions.DatabaseNotSynced: before ``db sync``.
        :raises murano_cidr.exceptions.DatabaseUnavailable: if the database
            cannot be reached or keeps failing after the retries.
        """
        owner = allocation_mod.validate_owner(owner)
        scope = allocation_mod.validate_scope(scope)
        pool = self.pool(ip_version)
        taken_set = None
        if not callable(taken):
            # Read (and validated) once, before anything is written.
            taken_set = taken_mod.TakenSet.from_taken(taken, pool.version)
        cidr, new = self.database.write(
            allocating.allocate, self.hints, owner, scope, pool, taken,
            taken_set, self.ages, self._exhausted)
        if new:
            LOG.info("Allocated %s to %s in scope %s", cidr, owner, scope)
        else:
            LOG.debug("Owner %s already holds %s in scope %s", owner, cidr,
                      scope)
        self._remember(owner, cidr)
        return cidr

    def _remember(self, owner, cidr=None):
        """Remember the CIDR allocated to ``owner``; forget it with None."""
        with self.guard:
            self.unconfirmed.pop(owner, None)
            if cidr is not None:
                self.unconfirmed[owner] = cidr
                if len(self.unconfirmed) > self.max_unconfirmed:
                    self.unconfirmed.popitem(last=False)

    def _exhausted(self, conn, pool, scope, taken_set):
        """The PoolExhausted of a full pool, with what the scope holds back."""
        if scope is None:
            return self.exhausted(pool, scope, pool.free_map(taken_set))
        held = held_in_pool(conn, pool, scope)
        back = hold_back(conn, scope, pool.version, *self.ages)
        return self.exhausted(
            pool, scope, pool.free_map(taken_set.union(held)),
            pool.free_map(held), held_back=_held_back(
                back, *self.ages,
                configuration=messages.config_options(self.conf)))

    def confirm(self, owner):
        """Mark the allocation of ``owner`` confirmed (see the class).

        :raises murano_cidr.exceptions.InvalidArgument: for a bad owner.
        :raises murano_cidr.exceptions.ReservationLost: if the CIDR this
            process allocated to ``owner`` is no longer the owner's
            (reclaimed after ``reservation_timeout``); nothing is written.
        :raises murano_cidr.exceptions.DatabaseNotSynced: before ``db sync``.
        :raises murano_cidr.exceptions.DatabaseUnavailable: if the database
            cannot be reached; the allocation stays unconfirmed.
        """
        owner = allocation_mod.validate_owner(owner)
        cidr = self.unconfirmed.get(owner)
        confirmed = self.database.write(allocating.confirm, owner, cidr)
        self._remember(owner)
        if not confirmed and cidr is not None:
            raise exceptions.ReservationLost(cidr=cidr, owner=owner, reason=(
                "reclaimed, unconfirmed for longer than [cidr_allocator] "
                "reservation_timeout = %d s, or released: it may be another "
                "network's now; if deployments take that long, raise "
                "reservation_timeout" % self.ages[1]))
        if not confirmed:
            LOG.warning("Asked to confirm the allocation of owner %s, which "
                        "holds none", owner)

    def release(self, owner):
        """Release ``owner`` at once, its CIDR held back (see the class)."""
        owner = allocation_mod.validate_owner(owner)
        released = self.database.write(allocating.release, owner)
        self._remember(owner)
        if released:
            LOG.info("Released the allocation of owner %s", owner)
        return released

    # NOTE: what only the commands ask (list included) is in records.py.
    records = "murano_cidr.operator.drivers.db.records"

    def get(self, owner):
        owner = allocation_mod.validate_owner(owner)
        row = self.database.read(allocating.get, owner)
        return models.to_allocation(row) if row is not None else None

    def list(self, scope=None):
        return self._records().live(self.database,
                                    allocation_mod.validate_scope(scope))

    def close(self):
        self.database.close()


def check_schema(connection, url="the database"):
    """Check the schema of a database before the driver uses it.

    A revision this code does not know is assumed newer, logged and
    accepted.

    :param connection: an open SQLAlchemy connection.
    :param url: the database, for the message (no password).
    :raises murano_cidr.exceptions.DatabaseNotSynced: if the tables are
        missing or at an older revision.
    :raises murano_cidr.exceptions.ForeignTables: if tables exist without
        a recorded revision.
    """
    current = models.revision_of(connection)
    if current == models.REVISION:
        return
    if current is None:
        tables = sorted(
            name for name in sa.inspect(connection).get_table_names()
            if name.startswith("murano_cidr_")
            and name != models.VERSION_TABLE)
        if tables:
            raise exceptions.ForeignTables(url=url, tables=tables,
                                           version_table=models.VERSION_TABLE)
        raise exceptions.DatabaseNotSynced(
            url=url, reason="the murano-cidr tables do not exist")
    if current in models.REVISIONS:
        raise exceptions.DatabaseNotSynced(
            url=url, reason="it is at revision %s, this code needs %s"
            % (current, models.REVISION))
    LOG.warning("The allocation database %s is at revision %s, unknown to "
                "this code (head %s); assuming a newer, compatible schema",
                url, current, models.REVISION)


def held_in_pool(conn, pool, scope):
    """What the scope's rows hold of ``pool``, as a :class:`~.TakenSet`."""
    return taken_mod.TakenSet(pool.version, [
        (int(r.range_first, 16), int(r.range_last, 16))
        for network in pool.networks
        for r in allocating.read_window(conn, scope, pool.version,
                                        network.first, network.last)[0]])


def hold_back(conn, scope, ip_version, grace, timeout):
    """Say what a scope holds back, by the server's clock.

    :returns: a row: ``live``, ``released``, ``in_grace`` (released within
        ``grace``), ``first_release`` (of those; naive UTC), ``unconfirmed``
        (live) and ``first_reservation`` (of those) rows.
    """
    rows = models.ALLOCATIONS.c
    in_grace = rows.released_at > models.utc_now(grace)
    unconfirmed = sa.and_(rows.released_at.is_(None),
                          rows.confirmed == sa.false())

    def count_if(condition):
        return sa.func.coalesce(sa.func.sum(compat.case((condition, 1),
                                                        else_=0)), 0)

    return conn.execute(compat.select(
        count_if(rows.released_at.is_(None)).label("live"),
        count_if(models.HELD).label("released"),
        count_if(in_grace).label("in_grace"),
        sa.func.min(compat.case((in_grace, rows.released_at)))
        .label("first_release"),
        count_if(unconfirmed).label("unconfirmed"),
        sa.func.min(compat.case((unconfirmed, rows.created_at)))
        .label("first_reservation")).where(sa.and_(
            models.scope_is(scope), rows.ip_version == ip_version))).first()


def _held_back(back, grace, timeout, configuration):
    """Say what ``back`` (:func:`hold_back`) holds back."""
    text = _("; %d live") % back.live
    if back.released:
        text += _(", %(n)d released and held back (%(g)d within "
                  "release_grace = %(grace)d s, %(r)d past it whose "
                  "subnet the last allocation saw on the router)") % {
            "n": back.released, "g": back.in_grace, "grace": grace,
            "r": back.released - back.in_grace}
    if back.first_release is not None:
        text += _("; the first held back frees at %s UTC unless its "
                  "subnet is on the router") % _after(
                      back.first_release, grace)
    if back.unconfirmed:
        text += _("; of the live, %(n)d unconfirmed, each reclaimed once "
                  "reservation_timeout = %(timeout)d s has passed unless "
                  "its subnet is on the router, the first at %(at)s "
                  "UTC") % {"n": back.unconfirmed, "timeout": timeout,
                            "at": _after(back.first_reservation, timeout)}
    return text + _("; 'murano-cidr %sreconcile' releases what deleted "
                    "environments left behind") % configuration


def _after(moment, seconds):
    """``moment`` (naive UTC) plus ``seconds``, to the second, as text."""
    return (moment + datetime.timedelta(seconds=seconds)).strftime(
        "%Y-%m-%d %H:%M:%S")
