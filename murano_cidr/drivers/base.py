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

"""The contract every allocator driver keeps.

A driver hands out subnet CIDRs from the configured pool to *owners* (the
network ids Murano passes as ``net_id``) so that no two live allocations of
one *scope* (normally the router id) overlap, and none overlaps the CIDRs the
caller says are already *taken* (the subnets on the router).
"""

import abc
import contextlib
import datetime

from oslo_log import log as logging

from murano_cidr import allocation as allocation_mod
from murano_cidr.drivers import capabilities as caps
from murano_cidr.drivers import hooks
from murano_cidr import exceptions
from murano_cidr import pool as pool_mod
from murano_cidr import taken as taken_mod

LOG = logging.getLogger(__name__)


class AllocatorDriver(hooks.DriverHooks, metaclass=abc.ABCMeta):
    """Base class of allocator drivers.

    A driver is built with the :class:`oslo_config.cfg.ConfigOpts` it reads;
    it registers its options there and validates them at once, so a bad pool
    fails at start-up rather than at the first allocation.

    What it can do and what the commands need from it without building it
    (options, preparation, status checks) are the class-level hooks of
    :class:`~murano_cidr.drivers.hooks.DriverHooks`.

    :param conf: an :class:`oslo_config.cfg.ConfigOpts`.
    :raises murano_cidr.exceptions.InvalidConfig: if an option is invalid.
    """

    def __init__(self, conf):
        self.register_opts(conf)
        self.conf = conf
        self.pools = pool_mod.pools_from_conf(conf)

    def pool(self, ip_version=4):
        """Return the pool of an IP version.

        :raises murano_cidr.exceptions.InvalidArgument: for a version that
            is not 4 or 6, or 6 when no IPv6 pool is configured.
        """
        allocation_mod.validate_ip_version(ip_version)
        try:
            return self.pools[ip_version]
        except KeyError:
            raise exceptions.InvalidArgument(
                name="ip_version", value=ip_version,
                reason="no IPv6 pool is configured; set [cidr_allocator] "
                "ipv6_pool_cidrs")

    def exhausted(self, pool, scope, free_map, allocated_map=None,
                  held_back=""):
        """Build the exhaustion error for a pool with nothing free.

        :param pool: the :class:`~murano_cidr.pool.Pool`.
        :param scope: the scope asked for.
        :param free_map: the :class:`~murano_cidr.freemap.FreeMap` of
            everything that blocks a candidate.
        :param allocated_map: a :class:`~murano_cidr.freemap.FreeMap` of the
            driver's own live allocations alone, if it keeps any.
        :param held_back: what the driver holds back and how to reclaim it,
            appended to the message (``"; ..."``), if it can tell.
        :returns: a :class:`~murano_cidr.exceptions.PoolExhausted`.
        """
        allocated = allocated_map.blocked if allocated_map else 0
        return exceptions.PoolExhausted(
            pool=str(pool), prefixlen=pool.prefixlen,
            scope=scope if scope is not None else "(none)",
            size=pool.size, allocated=allocated,
            taken=free_map.blocked - allocated, held_back=held_back)

    @abc.abstractmethod
    def allocate(self, owner, scope=None, taken=(), ip_version=4):
        """Allocate a CIDR for ``owner``.

        The CIDR comes from the pool of ``ip_version`` and overlaps nothing
        in ``taken`` and, for drivers that keep state, no live allocation of
        the same ``scope``. Drivers that keep state return the CIDR the
        owner already holds, if any.

        :param owner: who the CIDR is for: a non-empty string (Murano's
            ``net_id``).
        :param scope: what must not overlap, normally the router id; None
            for no scope.
        :param taken: CIDRs in use, as an iterable of strings or
            :class:`netaddr.IPNetwork`, or a callable returning one (called
            at the moment the driver decides). Only a callable protects
            against what changed since the caller listed the router: the
            ``lock`` driver calls it again under its lock after reserving,
            and gives the candidate up if its subnet appeared meanwhile; the
            ``db`` driver calls it after locking the scope's row, so a
            released CIDR is freed only by a read made after the call
            began. A plain collection is read once, before any lock, as a
            snapshot of whenever the caller made it: a subnet created
            since is not seen, and the ``db`` driver frees with it a
            released CIDR it does not show, so only ``[cidr_allocator]
            release_grace`` longer than its age covers that.
            Pass a callable that lists the router (the Murano integration
            does).
        :param ip_version: 4 or 6.
        :returns: the CIDR, as a string such as ``"10.0.3.0/24"``.
        :raises murano_cidr.exceptions.InvalidArgument: for a bad owner,
            scope, IP version or ``taken``.
        :raises murano_cidr.exceptions.PoolExhausted: if no candidate is free.
        :raises murano_cidr.exceptions.BackendUnavailable: if the driver's
            database or lock service cannot be reached; nothing is allocated.
        """

    def confirm(self, owner):
        """Say that the subnet of ``owner`` now exists.

        A driver that holds a short-lived reservation may drop it; a driver
        that keeps records marks the allocation confirmed; others do
        nothing.

        The caller's duty: call it only once the subnet exists on its router
        (for Murano, after the Heat stack push that created the subnet and
        its router interface), never before. From then on the router is the
        record: every allocation of the scope reads ``taken`` and never
        hands the CIDR out while the subnet is there, whatever this call
        does. So a caller whose subnet exists must not fail, roll back or
        release when ``confirm`` raises: it logs the error and goes on, as
        :meth:`murano_cidr.integration.murano.NetworkCidrAllocator.confirm_cidr`
        does. A caller that has no subnet yet has not reached ``confirm``;
        if its reservation is lost before the subnet is created, it
        releases and allocates again.

        :param owner: the owner passed to :meth:`allocate`.
        :raises murano_cidr.exceptions.InvalidArgument: for a bad owner.
        :raises murano_cidr.exceptions.ReservationLost: if the reservation
            expired before it was confirmed (drivers with reservations).
        :raises murano_cidr.exceptions.BackendUnavailable: if the driver's
            store cannot record it; the allocation stays unconfirmed.
        """
        allocation_mod.validate_owner(owner)

    @abc.abstractmethod
    def release(self, owner):
        """Free the CIDR of ``owner`` for reuse.

        :param owner: the owner passed to :meth:`allocate`.
        :returns: True if something was released, False if the owner held
            nothing (not an error).
        :raises murano_cidr.exceptions.InvalidArgument: for a bad owner.
        :raises murano_cidr.exceptions.BackendUnavailable: if the driver's
            store cannot be reached.
        """

    @abc.abstractmethod
    def get(self, owner):
        """Return what ``owner`` holds.

        :returns: an :class:`~murano_cidr.allocation.Allocation`, or None.
        :raises murano_cidr.exceptions.NotSupported: if the driver keeps no
            state.
        """

    @abc.abstractmethod
    def list(self, scope=None):
        """Return the live allocations, of one scope or of all.

        :param scope: a scope, or None for every allocation.
        :returns: a list of :class:`~murano_cidr.allocation.Allocation`,
            sorted by scope and CIDR.
        :raises murano_cidr.exceptions.NotSupported: if the driver keeps no
            state.
        """

    #: How long a released CIDR is held back at least (a
    #: :class:`datetime.timedelta`): the driver's ``[cidr_allocator]
    #: release_grace`` if it has :attr:`Capability.HOLDS_RELEASED`, which
    #: ``reconcile`` waits for too; none otherwise.
    release_grace = datetime.timedelta(0)

    def now(self):
        """Return the time on the clock of the driver's timestamps.

        :returns: an aware UTC time: the host's here, the database
            server's for ``db``; ``prune`` and ``reconcile`` measure on it.
        """
        return datetime.datetime.now(datetime.timezone.utc)

    def list_released(self, scope=None):
        """Return the released CIDRs the driver still holds back.

        A driver with :attr:`Capability.HOLDS_RELEASED` keeps a released
        CIDR out of its scope's pool until its subnet was seen off the
        router and a grace period passed; others forget it at once and
        return an empty list.

        :param scope: a scope, or None for every scope.
        :returns: a list of :class:`Allocation` whose ``owner`` is the
            former owner and ``released_at`` when it was released.
        """
        return []

    def free_released(self, held):
        """Stop holding back a released CIDR: its subnet left the router.

        For ``murano-cidr reconcile``, which saw the router's complete
        listing without it.

        :param held: an :class:`Allocation` from :meth:`list_released`.
        :returns: True if it was still held (and is now free), False if it
            was freed already or the driver holds nothing back.
        """
        return False

    def import_allocations(self, allocations):
        """Record CIDRs that already exist, all or nothing.

        Used when a live cloud switches to a driver that keeps state, so the
        networks it already has are never handed out again. An allocation
        already recorded identically is skipped (importing is idempotent).

        :param allocations: an iterable of
            :class:`~murano_cidr.allocation.Allocation`.
        :returns: the list of :class:`~murano_cidr.allocation.Allocation`
            newly recorded.
        :raises murano_cidr.exceptions.AllocationConflict: if one overlaps a
            live allocation of its scope (or another one of the batch);
            nothing is recorded.
        :raises murano_cidr.exceptions.OwnerConflict: if an owner already
            holds another CIDR; nothing is recorded.
        :raises murano_cidr.exceptions.NotSupported: if the driver keeps no
            state.
        """
        self.require(caps.Capability.IMPORTS, action="import allocations")
        raise NotImplementedError(
            "%s announces Capability.IMPORTS but does not implement "
            "import_allocations" % type(self).__name__)

    def import_stream(self, source):
        """:meth:`import_allocations` of more than memory holds at once.

        :param source: a callable returning an iterable of allocations,
            called again for each attempt of a retried transaction.
        :returns: the number of allocations newly recorded.
        :raises: as :meth:`import_allocations`.
        """
        return len(self.import_allocations(list(source())))

    def usage(self, scope=None, ip_version=4, taken=()):
        """Count what a scope uses of the pool.

        The one usage path: ``murano-cidr usage`` calls it for every scope
        it reports. This version reads :meth:`list`; a driver with a faster
        way (the ``db`` driver counts in SQL) overrides it.

        :param scope: the scope, or None for allocations without a scope.
        :param ip_version: 4 or 6.
        :param taken: CIDRs in use outside the allocator (from Neutron),
            as :meth:`allocate` takes them.
        :returns: a dictionary with ``scope``, ``ip_version``,
            ``allocations`` (live ones), ``released`` (released CIDRs still
            held back, which block candidates as allocations do) and the
            counts of :meth:`murano_cidr.pool.Pool.usage`.
        :raises murano_cidr.exceptions.InvalidArgument: for a bad scope, IP
            version or ``taken``.
        :raises murano_cidr.exceptions.NotSupported: if the driver keeps no
            state.
        """
        scope = allocation_mod.validate_scope(scope)
        pool = self.pool(ip_version)
        taken_set = taken_mod.TakenSet.from_taken(taken, pool.version)
        allocations = [a for a in self.list(scope=scope)
                       if a.scope == scope and a.ip_version == ip_version]
        released = [a for a in self.list_released(scope=scope)
                    if a.scope == scope and a.ip_version == ip_version]
        held = taken_mod.TakenSet.from_taken(
            [a.cidr for a in allocations + released], pool.version)
        return self.usage_result(pool, scope, len(allocations), held,
                                 taken_set, released=len(released))

    @staticmethod
    def usage_result(pool, scope, allocations, held, taken_set, released=0):
        """Build what :meth:`usage` returns, whichever way it counted.

        :param pool: the :class:`~murano_cidr.pool.Pool`.
        :param scope: the scope.
        :param allocations: how many live allocations the scope holds.
        :param held: a :class:`~murano_cidr.taken.TakenSet` of them, and of
            the released CIDRs still held back.
        :param taken_set: a :class:`~murano_cidr.taken.TakenSet` of the
            CIDRs in use outside the allocator.
        :param released: how many released CIDRs are still held back
            (:meth:`list_released`); ``held`` covers them too.
        :returns: the dictionary :meth:`usage` describes, with
            ``released`` besides.
        """
        result = pool.usage(held, taken_set)
        result.update(scope=scope, ip_version=pool.version,
                      allocations=allocations, released=released)
        return result

    def release_scope(self, scope):
        """Release every allocation of a scope (benchmarks, tests, tools).

        This version releases what :meth:`list` returns, one by one; a
        driver with a store may do it at once and forget what it keeps
        about the scope itself.

        :param scope: the scope; None for the allocations without one.
        :returns: how many allocations were released.
        :raises murano_cidr.exceptions.NotSupported: if the driver keeps no
            state.
        """
        scope = allocation_mod.validate_scope(scope)
        return sum(1 for a in self.list(scope=scope)
                   if a.scope == scope and self.release(a.owner))

    @contextlib.contextmanager
    def reserve(self, owner, scope=None, taken=(), ip_version=4):
        """Allocate, let the caller create the subnet, then confirm.

        If the body raises, the allocation this ``reserve`` made is
        released and the error re-raised::

            with allocator.reserve(net_id, scope=router_id,
                                   taken=read_router) as cidr:
                create_subnet(cidr)

        An allocation the owner held before (confirmed or not) is what
        :meth:`allocate` returns again; it is left as it was when the body
        fails, since its subnet may exist. (Owners are unique per network:
        two callers reserving for one owner at once are not told apart.)

        :returns: a context manager yielding the CIDR.
        :raises: whatever :meth:`allocate`, :meth:`confirm` or the body
            raise.
        """
        held = (self.get(owner) if self.has(caps.Capability.KEEPS_STATE)
                else None)
        cidr = self.allocate(owner, scope=scope, taken=taken,
                             ip_version=ip_version)
        try:
            yield cidr
        except BaseException:
            if held is None:
                with contextlib.suppress(exceptions.MuranoCidrException):
                    self.release(owner)
            raise
        self.confirm(owner)

    #: The option that gives the driver a store engines on several hosts
    #: share, for the message when :attr:`single_host_store` is set.
    shared_store_option = None

    @property
    def single_host_store(self):
        """What keeps this driver's state, if it serves one host only.

        Engines on other hosts would not see it (an SQLite file, file
        locks), so two hosts could hand out the same CIDR;
        :attr:`shared_store_option` says what to set instead.

        :returns: a description of the store, such as ``"the SQLite
            database sqlite:///..."``, or None if nothing limits the driver
            to one host.
        """
        return None

    def close(self):
        """Release any connection or lock the driver holds."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
