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
CIDRs, whatever the number of engines, hosts or pool settings, and
whoever wrote the rows: the database decides, under the scope's row lock,
never a check in Python or a process's memory.

One allocation is one transaction, usually of two statements: see
``doc/source/contributor/drivers.rst``.
"""

import collections
import datetime
import threading

from oslo_log import log as logging

from murano_cidr.engine import allocation as allocation_mod
from murano_cidr.engine.drivers import base
from murano_cidr.engine.drivers import capabilities as caps
from murano_cidr.engine.drivers import db as db_package
from murano_cidr.engine.drivers.db import allocating
from murano_cidr.engine.drivers.db import api
from murano_cidr.engine.drivers.db import models
from murano_cidr.engine.drivers.db import options as db_options
from murano_cidr.engine.drivers.db import statements
from murano_cidr.engine import taken as taken_mod
from murano_cidr import exceptions
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
        self.hints = allocating.Hints()
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

    # -- allocate ----------------------------------------------------------

    def allocate(self, owner, scope=None, taken=(), ip_version=4):
        """Allocate a CIDR for ``owner``, recorded in the database.

        See :meth:`murano_cidr.engine.drivers.base.AllocatorDriver.allocate`
        (and its errors). A callable ``taken`` is read inside the transaction,
        after the scope's row is locked, on every attempt.

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
            self._allocate, owner, scope, pool, taken, taken_set)
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

    def _allocate(self, conn, owner, scope, pool, taken, taken_set):
        """One attempt, one transaction: :func:`.allocating.allocate`."""
        cidr, new, taken_set = allocating.allocate(
            conn, self.hints, owner, scope, pool, taken, taken_set,
            self.ages)
        if cidr is None:
            # NOTE: what a full pool holds back is read and worded only
            # when it is full, never on a pick that finds a CIDR.
            from murano_cidr.engine.drivers.db import held_back
            raise held_back.exhausted(self, conn, pool, scope, taken_set)
        return cidr, new

    # -- confirm, release, get, list -----------------------------------------

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
        confirmed = self.database.write(statements.confirm, owner, cidr)
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
        released = self.database.write(statements.release, owner)
        self._remember(owner)
        if released:
            LOG.info("Released the allocation of owner %s", owner)
        return released

    # NOTE: what only the commands ask (counts, what is held back,
    # freeing it, deleting a scope, importing) is in records.py, and the
    # list of every allocation is read there too: an engine, which never
    # asks it, does not load it.
    records = "murano_cidr.operator.drivers.db.records"

    def get(self, owner):
        owner = allocation_mod.validate_owner(owner)
        row = self.database.read(statements.get, owner)
        return models.to_allocation(row) if row is not None else None

    def list(self, scope=None):
        return self._records().live(self.database,
                                    allocation_mod.validate_scope(scope))

    def close(self):
        self.database.close()


def check_schema(connection, url="the database"):
    """Check the schema of a database before the driver uses it.

    Given to :class:`murano_cidr.engine.drivers.db.api.Database` by the driver.

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
    # NOTE: alembic's scripts are read (to tell an older revision from a
    # newer one) only for a database at another revision than this code's.
    from murano_cidr.engine.drivers.db import revisions
    revisions.check_revision(current, url, revisions.tables_of(connection)
                             if current is None else ())
