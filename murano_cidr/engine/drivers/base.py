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

from murano_cidr.engine import allocation as allocation_mod
from murano_cidr.engine.drivers import capabilities as caps
from murano_cidr.engine import pool as pool_mod
from murano_cidr import exceptions
from murano_cidr import opts


class AllocatorDriver(metaclass=abc.ABCMeta):
    """Base class of allocator drivers; class methods serve unbuilt ones.

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
        """Return the driver's own ``(group, [options])`` pairs."""
        return []

    @classmethod
    def register_opts(cls, conf):
        """Register murano-cidr's and the driver's options; idempotent."""
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
        """Build the error of a pool with nothing free for ``scope``.

        :param free_map: the :class:`~murano_cidr.engine.freemap.FreeMap` of
            everything that blocks a candidate.
        :param allocated_map: that of the driver's own live allocations, if
            it keeps any.
        :param held_back: ``"; ..."``: what the driver holds back and how to
            reclaim it, if it can tell.
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
        """Allocate a CIDR for ``owner``; the owner's own again if it has one.

        :param owner: a string or an integer (Murano's ``net_id``).
        :param scope: what must not overlap (the router id), or None.
        :param taken: CIDRs in use: an iterable of strings or
            :class:`netaddr.IPNetwork`, or a callable returning one, called
            when the driver decides.
        :param ip_version: 4 or 6.
        :returns: a CIDR of the pool that overlaps nothing in ``taken`` nor,
            for a driver that keeps state, a live allocation of ``scope``.
        :raises murano_cidr.exceptions.InvalidArgument: for a bad owner,
            scope, IP version or ``taken``.
        :raises murano_cidr.exceptions.PoolExhausted: if nothing is free.
        :raises murano_cidr.exceptions.BackendUnavailable: if the store
            cannot be reached; nothing is allocated.
        """

    def confirm(self, owner):
        """Say that the subnet of ``owner`` exists on its router.

        :raises murano_cidr.exceptions.InvalidArgument: for a bad owner.
        :raises murano_cidr.exceptions.ReservationLost: if the reservation
            expired or was reclaimed first.
        :raises murano_cidr.exceptions.BackendUnavailable: if the store
            cannot record it; the allocation stays unconfirmed.
        """
        allocation_mod.validate_owner(owner)

    @abc.abstractmethod
    def release(self, owner):
        """Free the CIDR of ``owner`` for reuse.

        :returns: True if something was released, False if the owner held
            nothing (not an error).
        :raises murano_cidr.exceptions.InvalidArgument: for a bad owner.
        :raises murano_cidr.exceptions.BackendUnavailable: if the store
            cannot be reached.
        """

    @abc.abstractmethod
    def get(self, owner):
        """Return the :class:`~.allocation.Allocation` of ``owner``, or None.

        :raises murano_cidr.exceptions.NotSupported: if the driver keeps no
            state.
        """

    @abc.abstractmethod
    def list(self, scope=None):
        """Return the live allocations of a scope (None: all), sorted.

        :raises murano_cidr.exceptions.NotSupported: if the driver keeps no
            state.
        """

    #: How long a released CIDR is held back at least.
    release_grace = datetime.timedelta(0)

    #: The module of what only the commands ask of a driver, imported by
    #: name when asked (drivers.rst, "The contract").
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
        """Allocate, let the body create the subnet, then confirm.

        If the body raises, an allocation this call made is released (one
        the owner held before is left), and the error re-raised.

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

    #: The option to set for a store engines on several hosts share.
    shared_store_option = None

    @property
    def single_host_store(self):
        """Describe the driver's store if it serves one host only, or None.

        E.g. ``"the SQLite database sqlite:///..."``.
        """
        return None

    def close(self):
        """Release any connection or lock the driver holds."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
