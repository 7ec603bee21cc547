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

No two live allocations of a scope overlap, and an owner never holds two
CIDRs, whatever the number of engines, hosts or pool settings: the
database enforces it, not a check in Python.

How an allocation is decided, in one transaction of two statements:

1. the scope's row is updated, which locks it: allocations of one scope
   queue behind each other, and everything read next is current (PostgreSQL
   reads committed data; the driver sets READ COMMITTED on its MySQL
   sessions). On Galera, where locks are per node, two such transactions
   conflict at commit and one is retried;
2. a candidate is drawn at random among those ``taken`` and the driver's
   summary of the scope leave free (:mod:`murano_cidr.drivers.db.search`:
   a hint of which to try, never a decision that one is free), and
   inserted by an ``INSERT ... SELECT`` that inserts nothing if the owner
   already holds a CIDR or any live or held row of the scope overlaps the
   candidate, whoever wrote it (index lookups: the rows starting inside
   it, and each possible start of a CIDR containing it;
   :mod:`murano_cidr.drivers.db.placing`). The unique owner and the
   unique (scope, IP version, first address) turn any race that slipped
   through into a duplicate key.

When nothing was inserted, one more statement reads whether the owner
holds a CIDR (then it is returned: allocation is idempotent) and the
rows around the candidate, and another candidate is drawn. The first
allocation of a process in a scope also reads the scope's rows once, to
build the summary.

So overlapping CIDRs of different sizes (a /23 and a /24 during a rolling
configuration change) are impossible too: both allocations hold the same
scope row, and the database checks the overlap. No ``SELECT ... FOR
UPDATE`` and no check-then-insert in Python alone.

A released allocation of a scope is held back, its range occupied, until
its subnet was seen off the router and ``[cidr_allocator] release_grace``
passed (:mod:`murano_cidr.drivers.db.releasing`): the full read of a
scope's rows, under its lock, deletes those that qualify.

Lost races, deadlocks and dropped connections are retried by
``oslo_db.api.wrap_db_retry`` (``[cidr_allocator_database] db_max_retries``
times, with a growing, randomised pause), then fail with
:class:`~murano_cidr.exceptions.DatabaseUnavailable`.
"""

import datetime

from oslo_log import log as logging

from murano_cidr import allocation as allocation_mod
from murano_cidr.drivers import base
from murano_cidr.drivers import capabilities as caps
from murano_cidr.drivers import db as db_package
from murano_cidr.drivers.db import api
from murano_cidr.drivers.db import connection
from murano_cidr.drivers.db import options as db_options
from murano_cidr.drivers.db import placing
from murano_cidr.drivers.db import queries
from murano_cidr.drivers.db import releasing
from murano_cidr.drivers.db import revisions
from murano_cidr.drivers.db import search
from murano_cidr import exceptions
from murano_cidr import opts
from murano_cidr import taken as taken_mod

LOG = logging.getLogger(__name__)


class DbDriver(base.AllocatorDriver):
    """Allocations kept in SQL, with overlaps excluded by the database.

    Configuration: ``[cidr_allocator_database] connection`` (an SQLAlchemy
    URL; unset, an SQLite file under ``[cidr_allocator] state_path``). Run
    ``murano-cidr-manage db sync`` first; a driver used before fails with
    :class:`~murano_cidr.exceptions.DatabaseNotSynced`.

    Usage considerations:

    * SQLite serves the processes of one host, one writer at a time; use
      MySQL/MariaDB (Galera included) or PostgreSQL for several hosts.
    * ``allocate`` is idempotent per owner: the owner's CIDR is returned
      again, whatever ``taken`` says now. Asking for it in another scope or
      IP version raises :class:`~murano_cidr.exceptions.OwnerConflict`.
    * Allocations without a scope are never checked against each other
      (``scope=None`` means overlaps are allowed); only ``taken`` applies.
    * An allocation lives until :meth:`release`; ``confirm`` marks it
      confirmed (a leaked, unconfirmed one can be pruned by its age).
    * A released CIDR of a scope is held back (:meth:`list_released`)
      until an allocation in the scope reads ``taken`` without it, after
      ``[cidr_allocator] release_grace``; see
      :mod:`~murano_cidr.drivers.db.releasing`.
    * Every allocation of a scope locks that scope's row, so allocations in
      one scope are serialised by the database, while different scopes
      proceed in parallel. The driver's MySQL sessions use READ COMMITTED.
    * Owners and scopes are compared exactly (case and Unicode form
      matter) on every backend; leading or trailing white space is refused.
    """

    name = "db"
    capabilities = frozenset({caps.Capability.KEEPS_STATE,
                              caps.Capability.SHARES_STATE,
                              caps.Capability.OUTLIVES_PROCESS,
                              caps.Capability.PREVENTS_COLLISIONS,
                              caps.Capability.IMPORTS,
                              caps.Capability.HOLDS_RELEASED})
    extras = db_package.EXTRAS

    @classmethod
    def list_opts(cls):
        return db_options.list_opts()

    def __init__(self, conf):
        super().__init__(conf)
        self.database = api.Database(conf,
                                     schema_check=revisions.check_schema)
        self._summaries = search.Summaries()
        self.release_grace = datetime.timedelta(
            seconds=conf[opts.GROUP].release_grace)

    shared_store_option = ("[cidr_allocator_database] connection (a "
                           "MySQL/MariaDB or PostgreSQL database)")

    @property
    def single_host_store(self):
        """The SQLite database, which serves one host; None otherwise."""
        if connection.serves_one_host(self.database.url):
            return "the SQLite database %s" % self.database.safe_url
        return None

    # -- allocate ----------------------------------------------------------

    def allocate(self, owner, scope=None, taken=(), ip_version=4):
        """Allocate a CIDR for ``owner``, recorded in the database.

        See :meth:`murano_cidr.drivers.base.AllocatorDriver.allocate`. A
        callable ``taken`` is read inside the transaction, after the scope's
        row is locked, on every attempt.

        :returns: the CIDR; the one ``owner`` already holds, if any.
        :raises murano_cidr.exceptions.InvalidArgument: for a bad owner,
            scope, IP version or ``taken``; nothing is written.
        :raises murano_cidr.exceptions.OwnerConflict: if ``owner`` holds a
            CIDR of another scope or IP version.
        :raises murano_cidr.exceptions.PoolExhausted: if no candidate is free.
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
        # NOTE: before a callable taken is read: a released row is freed
        # only by a read of taken made a grace period after its release
        # (the model check, tools/model/cidr.pml, found the hole otherwise).
        cutoff = queries.utcnow() - self.release_grace
        cidr, new = self.database.write(
            self._allocate, owner, scope, pool, taken, taken_set, cutoff)
        if new:
            LOG.info("Allocated %s to %s in scope %s", cidr, owner, scope)
        else:
            LOG.debug("Owner %s already holds %s in scope %s", owner, cidr,
                      scope)
        return cidr

    def _allocate(self, conn, owner, scope, pool, taken, taken_set, cutoff):
        """One attempt, in one transaction; returns ``(cidr, new)``."""
        if scope is not None:
            queries.lock_scope(conn, scope)
        if taken_set is None:
            # A callable is read on every attempt once the scope is ours,
            # at the moment the driver decides.
            taken_set = taken_mod.TakenSet.from_taken(taken, pool.version)
        taken_map = pool.free_map(taken_set)
        if scope is None:
            cidr = placing.insert_unscoped(conn, owner, pool, taken_map)
        else:
            cidr = placing.insert_in_scope(
                conn, self._summaries, owner, scope, pool, taken_set,
                taken_map, cutoff)
        return self._placed(conn, owner, scope, pool, taken_set, cidr)

    def _placed(self, conn, owner, scope, pool, taken_set, cidr):
        """``(cidr, True)`` for a new CIDR, else the owner's or an error."""
        if cidr is not None:
            return cidr, True
        row = queries.get(conn, owner)
        if row is not None:
            return self._held(row, owner, scope, pool.version), False
        raise self._exhausted(conn, pool, scope, taken_set)

    def _held(self, row, owner, scope, ip_version):
        if row.scope != scope or row.ip_version != ip_version:
            raise exceptions.OwnerConflict(
                owner=owner, cidr=row.cidr,
                scope=row.scope if row.scope is not None else "(none)")
        return row.cidr

    def _exhausted(self, conn, pool, scope, taken_set):
        if scope is None:
            held = taken_mod.TakenSet(pool.version)
        else:
            held = placing.held_in_pool(conn, pool, scope)
        return self.exhausted(pool, scope,
                              pool.free_map(taken_set.union(held)),
                              pool.free_map(held))

    # -- confirm, release, get, list -----------------------------------------

    def confirm(self, owner):
        owner = allocation_mod.validate_owner(owner)
        if not self.database.write(queries.confirm, owner):
            LOG.warning("Asked to confirm the allocation of owner %s, which "
                        "holds none", owner)

    def release(self, owner):
        """Release ``owner`` at once, its CIDR held back (see the class)."""
        owner = allocation_mod.validate_owner(owner)
        released = self.database.write(releasing.release, owner)
        if released:
            LOG.info("Released the allocation of owner %s", owner)
        return released

    def list_released(self, scope=None):
        scope = allocation_mod.validate_scope(scope)
        rows = self.database.read(releasing.list_released, scope)
        rows = sorted(rows, key=lambda r: (r.scope, r.ip_version,
                                           r.range_first))
        return [releasing.to_allocation(r) for r in rows]

    def free_released(self, held):
        freed = self.database.write(releasing.free, held)
        if freed:
            LOG.info("Freed the released %s of scope %s (owner %s)",
                     held.cidr, held.scope, held.owner)
        return freed

    def get(self, owner):
        owner = allocation_mod.validate_owner(owner)
        row = self.database.read(queries.get, owner)
        return queries.to_allocation(row) if row is not None else None

    def list(self, scope=None):
        scope = allocation_mod.validate_scope(scope)
        rows = self.database.read(queries.list_rows, scope)
        rows = sorted(rows, key=lambda r: (r.scope is not None,
                                           r.scope or "", r.ip_version,
                                           r.range_first))
        return [queries.to_allocation(r) for r in rows]

    def usage(self, scope=None, ip_version=4, taken=()):
        """Count what a scope uses of the pool, reading only its rows.

        See :meth:`murano_cidr.drivers.base.AllocatorDriver.usage`.
        """
        scope = allocation_mod.validate_scope(scope)
        pool = self.pool(ip_version)
        taken_set = taken_mod.TakenSet.from_taken(taken, pool.version)

        def read(conn):
            return (queries.count(conn, scope, pool.version),
                    placing.held_in_pool(conn, pool, scope),
                    releasing.count_released(conn, scope, pool.version))

        allocations, held, released = self.database.read(read)
        return self.usage_result(pool, scope, allocations, held, taken_set,
                                 released=released)

    def release_scope(self, scope):
        """Delete a scope's allocations, in one transaction.

        The scope's row stays, locked like an allocation's.

        See :meth:`murano_cidr.drivers.base.AllocatorDriver.release_scope`.
        """
        scope = allocation_mod.validate_scope(scope)
        released = self.database.write(queries.delete_scope, scope)
        self._summaries.forget(scope)
        LOG.info("Released %d allocations of scope %s", released, scope)
        return released

    # -- import ------------------------------------------------------------

    def import_allocations(self, allocations):
        """Record CIDRs that already exist, all or nothing.

        See :meth:`murano_cidr.drivers.base.AllocatorDriver.import_allocations`
        and :mod:`murano_cidr.drivers.db.importing`.
        """
        # NOTE: imported here: importing is an operator's command, and an
        # engine, which never runs it, does not load it.
        from murano_cidr.drivers.db import importing as db_importing
        recorded = db_importing.import_allocations(self.database, allocations)
        if recorded:
            LOG.info("Imported %d allocations", len(recorded))
        return recorded

    def close(self):
        self.database.close()
