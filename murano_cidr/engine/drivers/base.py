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

"""The contract every allocator driver keeps: :class:`AllocatorDriver`.

doc/source/contributor/drivers.rst ("The contract", "Hooks") says what a
driver guarantees and what its caller must do.
"""

import abc
import contextlib
import datetime
import importlib

from oslo_log import log as logging

from murano_cidr.engine import allocation as allocation_mod
from murano_cidr.engine.drivers import capabilities as caps
from murano_cidr.engine import pool as pool_mod
from murano_cidr import exceptions
from murano_cidr import opts

LOG = logging.getLogger(__name__)


class AllocatorDriver(metaclass=abc.ABCMeta):
    """Base class of allocator drivers.

    Built with the configuration it reads: it registers its options there
    and validates them at once, so a bad pool fails at start-up. The
    class-level attributes and class methods are what commands ask of a
    driver without building it.

    :param conf: an :class:`oslo_config.cfg.ConfigOpts`.
    :raises murano_cidr.exceptions.InvalidConfig: if an option is invalid.
    :cvar name: the driver's entry point name.
    :cvar capabilities: a frozenset of
        :class:`~murano_cidr.engine.drivers.capabilities.Capability`.
    :cvar limitations: why the driver lacks a capability, by capability,
        in words for an operator (else :data:`.capabilities.DEFAULT_REASONS`).
    :cvar extras: murano-cidr's extras that install the client libraries
        of the driver's back ends.
    """

    name = None
    capabilities = frozenset()
    limitations = {}
    extras = ()

    def __init__(self, conf):
        self.register_opts(conf)
        self.conf = conf
        self.pools = pool_mod.pools_from_conf(conf)

    @classmethod
    def list_opts(cls):
        """Return the driver's own options, for the sample configuration.

        :returns: ``(group, [options])`` pairs, as oslo-config-generator
            takes them, without the ``[cidr_allocator]`` options every
            driver reads.
        """
        return []

    @classmethod
    def register_opts(cls, conf):
        """Register murano-cidr's options and the driver's own on ``conf``.

        Safe to call more than once on the same configuration object.
        """
        opts.register_common_opts(conf)
        opts.register_listed(conf, cls.list_opts())

    @classmethod
    def has(cls, capability):
        """Tell whether the driver has a :class:`.capabilities.Capability`."""
        return capability in cls.capabilities

    @classmethod
    def require(cls, require, action=None):
        """Refuse what needs a capability the driver lacks.

        :param require: a :class:`.capabilities.Capability` or an iterable
            of them.
        :param action: what was asked, e.g. ``"list allocations"``, for the
            message; the capability's own description if None.
        :raises murano_cidr.exceptions.CapabilityMissing: naming the first
            capability missing, and why the driver lacks it.
        """
        for capability in caps.normalise(require):
            if capability not in cls.capabilities:
                raise caps.capability_missing(cls, capability, action)

    def pool(self, ip_version=4):
        """Return the pool of an IP version.

        :raises murano_cidr.exceptions.InvalidArgument: for a version that
            is not 4 or 6, or 6 when no IPv6 pool is configured.
        """
        try:
            if not isinstance(ip_version, bool):
                return self.pools[ip_version]
        except (KeyError, TypeError):
            pass
        allocation_mod.validate_ip_version(ip_version)
        raise exceptions.InvalidArgument(
            name="ip_version", value=ip_version,
            reason="no IPv6 pool is configured; set [cidr_allocator] "
            "ipv6_pool_cidrs")

    def exhausted(self, pool, scope, free_map, allocated_map=None,
                  held_back=""):
        """Build the exhaustion error for a pool with nothing free.

        :param pool: the :class:`~murano_cidr.engine.pool.Pool`.
        :param scope: the scope asked for.
        :param free_map: the :class:`~murano_cidr.engine.freemap.FreeMap` of
            everything that blocks a candidate.
        :param allocated_map: a :class:`~murano_cidr.engine.freemap.FreeMap` of
            the driver's own live allocations alone, if it keeps any.
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
            :class:`netaddr.IPNetwork`, or a callable returning one, called
            at the moment the driver decides, under its lock or row: only
            a callable sees a subnet created since the caller listed the
            router (doc/source/contributor/drivers.rst, "The contract").
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

        Call it only once the subnet exists on its router; from then on the
        router is the record, so a caller never fails, rolls back or
        releases because ``confirm`` raised (doc/source/contributor/
        drivers.rst, "The contract", says the caller's duty in full).

        :param owner: the owner passed to :meth:`allocate`.
        :raises murano_cidr.exceptions.InvalidArgument: for a bad owner.
        :raises murano_cidr.exceptions.ReservationLost: if the reservation
            expired (``lock``) or was reclaimed (``db``) before it was
            confirmed.
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

        :returns: an :class:`~murano_cidr.engine.allocation.Allocation`, or
            None.
        :raises murano_cidr.exceptions.NotSupported: if the driver keeps no
            state.
        """

    @abc.abstractmethod
    def list(self, scope=None):
        """Return the live allocations, of one scope or of all.

        :param scope: a scope, or None for every allocation.
        :returns: a list of :class:`~murano_cidr.engine.allocation.Allocation`,
            sorted by scope and CIDR.
        :raises murano_cidr.exceptions.NotSupported: if the driver keeps no
            state.
        """

    #: How long a released CIDR is held back at least (a
    #: :class:`datetime.timedelta`): the driver's ``[cidr_allocator]
    #: release_grace`` if it has :attr:`Capability.HOLDS_RELEASED`, which
    #: ``reconcile`` waits for too; none otherwise.
    release_grace = datetime.timedelta(0)

    #: The module of what only the commands ask of the driver (its clock,
    #: what it holds back, imports, usage, deleting a scope): the methods
    #: below call its functions, which take the driver first. It is
    #: imported when one is called, so an engine never loads it. A driver
    #: with ways of its own names a module defining every function of
    #: :mod:`murano_cidr.operator.drivers.records` (or overrides the methods).
    records = "murano_cidr.operator.drivers.records"

    def _records(self):
        return importlib.import_module(self.records)

    def now(self):
        """Read the store's clock: :func:`.records.now`."""
        return self._records().now(self)

    def live_allocations(self):
        """Every live allocation: :func:`.records.live_allocations`."""
        return self._records().live_allocations(self)

    def list_released(self, scope=None):
        """What is held back: :func:`.records.list_released`."""
        return self._records().list_released(self, scope)

    def free_released(self, held):
        """Stop holding a CIDR back: :func:`.records.free_released`."""
        return self._records().free_released(self, held)

    def import_allocations(self, allocations):
        """Record existing CIDRs: :func:`.records.import_allocations`."""
        return self._records().import_allocations(self, allocations)

    def import_stream(self, source):
        """Record existing CIDRs: :func:`.records.import_stream`."""
        return self._records().import_stream(self, source)

    def usage(self, scope=None, ip_version=4, taken=()):
        """Count what a scope uses: :func:`.records.usage`."""
        return self._records().usage(self, scope, ip_version, taken)

    def release_scope(self, scope):
        """Release a whole scope: :func:`.records.release_scope`."""
        return self._records().release_scope(self, scope)

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
