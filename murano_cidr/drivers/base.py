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
import dataclasses
import datetime
import typing

from oslo_log import log as logging

from murano_cidr import exceptions
from murano_cidr import opts
from murano_cidr import pool as pool_mod
from murano_cidr import taken as taken_mod

LOG = logging.getLogger(__name__)

#: The longest owner or scope accepted: the width of the database columns,
#: and of Neutron's ids with room to spare.
MAX_ID_LENGTH = 255


@dataclasses.dataclass(frozen=True)
class Allocation(object):
    """A CIDR held by an owner.

    :ivar owner: who holds it (a Neutron network id, for Murano).
    :ivar cidr: the CIDR, as a string.
    :ivar scope: where it must not overlap (a router id), or None.
    :ivar ip_version: 4 or 6.
    :ivar confirmed: False while it is only a reservation.
    :ivar created_at: when it was allocated (UTC), where the driver knows.
    """

    owner: str
    cidr: str
    scope: typing.Optional[str] = None
    ip_version: int = 4
    confirmed: bool = True
    created_at: typing.Optional[datetime.datetime] = None

    def to_dict(self):
        """Return the allocation as a JSON-friendly dictionary."""
        result = dataclasses.asdict(self)
        if self.created_at is not None:
            result["created_at"] = self.created_at.isoformat()
        return result


def validate_id(value, name, allow_none=False):
    """Check an owner or scope and return it.

    :param value: the value given by the caller.
    :param name: ``"owner"`` or ``"scope"``, for the message.
    :param allow_none: whether None is accepted (it is for a scope).
    :raises murano_cidr.exceptions.InvalidArgument: for anything but a
        non-empty, printable string of at most :data:`MAX_ID_LENGTH`
        characters.
    """
    if value is None and allow_none:
        return None
    if not isinstance(value, str):
        raise exceptions.InvalidArgument(
            name=name, value=value,
            reason="must be a string, got %s" % type(value).__name__)
    if not value or not value.strip():
        raise exceptions.InvalidArgument(name=name, value=value,
                                         reason="must not be empty")
    if len(value) > MAX_ID_LENGTH:
        raise exceptions.InvalidArgument(
            name=name, value=value[:40] + "...",
            reason="is %d characters long, more than the %d allowed"
            % (len(value), MAX_ID_LENGTH))
    if not value.isprintable():
        raise exceptions.InvalidArgument(
            name=name, value=value,
            reason="must contain printable characters only")
    return value


def validate_ip_version(ip_version):
    """Check an IP version and return it.

    :raises murano_cidr.exceptions.InvalidArgument: unless it is 4 or 6.
    """
    if isinstance(ip_version, bool) or ip_version not in (4, 6):
        raise exceptions.InvalidArgument(name="ip_version", value=ip_version,
                                         reason="must be 4 or 6")
    return ip_version


def pools_from_conf(conf):
    """Build the IPv4 and IPv6 pools from ``[cidr_allocator]``.

    :param conf: an :class:`oslo_config.cfg.ConfigOpts` with the options
        registered.
    :returns: a dictionary from IP version to :class:`~murano_cidr.pool.Pool`
        (no key 6 when no IPv6 pool is configured).
    :raises murano_cidr.exceptions.InvalidConfig: naming the option at fault.
    """
    group = conf[opts.GROUP]
    pools = {}
    if group.pool_cidrs:
        prefixlen = group.subnet_prefixlen
        prefixlen_option = "subnet_prefixlen"
        if prefixlen is None:
            if (isinstance(group.max_hosts, bool)
                    or not isinstance(group.max_hosts, int)
                    or group.max_hosts < 1):
                raise exceptions.InvalidConfig(
                    option="max_hosts",
                    reason="must be a positive integer, got %r"
                    % (group.max_hosts,))
            prefixlen = 32 - pool_mod.bits_for(group.max_hosts)
            prefixlen_option = "max_hosts"
        pools[4] = pool_mod.Pool.from_cidrs(
            group.pool_cidrs, prefixlen, "pool_cidrs", prefixlen_option,
            version=4)
    else:
        pools[4] = pool_mod.Pool.from_murano(
            group.env_ip_template, group.max_environments, group.max_hosts)
    if group.ipv6_pool_cidrs:
        pools[6] = pool_mod.Pool.from_cidrs(
            group.ipv6_pool_cidrs, group.ipv6_subnet_prefixlen,
            "ipv6_pool_cidrs", "ipv6_subnet_prefixlen", version=6)
    return pools


class AllocatorDriver(object, metaclass=abc.ABCMeta):
    """Base class of allocator drivers.

    A driver is built with the :class:`oslo_config.cfg.ConfigOpts` it reads;
    it registers its options there and validates them at once, so a bad pool
    fails at start-up rather than at the first allocation.

    Drivers announce what they can do through class attributes, the way tooz
    drivers announce their capabilities:

    :cvar name: the driver's entry point name.
    :cvar keeps_state: True if the driver remembers allocations, so that
        :meth:`allocate` is idempotent per owner and :meth:`get` and
        :meth:`list` answer. False drivers raise
        :class:`~murano_cidr.exceptions.NotSupported` from those.
    :cvar holds_reservations: True if :meth:`allocate` holds a reservation
        that :meth:`confirm` turns into an allocation.
    :cvar prevents_collisions: True if two concurrent callers can never be
        handed overlapping CIDRs of one scope.
    :cvar shares_state: True if every process sees the same allocations,
        so that a command line (list, usage, import, prune) acts on what the
        engines hold. False for drivers that remember nothing, or only what
        the process itself allocated.

    :param conf: an :class:`oslo_config.cfg.ConfigOpts`.
    :raises murano_cidr.exceptions.InvalidConfig: if an option is invalid.
    """

    name = None
    keeps_state = False
    holds_reservations = False
    prevents_collisions = False
    shares_state = False

    def __init__(self, conf):
        opts.register_opts(conf)
        self.conf = conf
        self.pools = pools_from_conf(conf)

    def pool(self, ip_version=4):
        """Return the pool of an IP version.

        :raises murano_cidr.exceptions.InvalidArgument: for a version that
            is not 4 or 6, or 6 when no IPv6 pool is configured.
        """
        validate_ip_version(ip_version)
        try:
            return self.pools[ip_version]
        except KeyError:
            raise exceptions.InvalidArgument(
                name="ip_version", value=ip_version,
                reason="no IPv6 pool is configured; set [cidr_allocator] "
                "ipv6_pool_cidrs")

    def require_shared_state(self, action):
        """Refuse an action that needs allocations shared between processes.

        :param action: what was asked, e.g. ``"list allocations"``.
        :raises murano_cidr.exceptions.NotSupported: unless
            :attr:`shares_state`.
        """
        if self.shares_state:
            return
        if self.keeps_state:
            reason = ("it keeps its reservations in the memory of each "
                      "engine process, and this process holds none of them; "
                      "use the db driver for allocations every process sees")
        else:
            reason = ("it keeps no state; set [cidr_allocator] driver to one "
                      "that does (db) first")
        raise exceptions.NotSupported(driver=self.name, action=action,
                                      reason=reason)

    def exhausted(self, pool, scope, free_map, allocated_map=None):
        """Build the exhaustion error for a pool with nothing free.

        :param pool: the :class:`~murano_cidr.pool.Pool`.
        :param scope: the scope asked for.
        :param free_map: the :class:`~murano_cidr.pool.FreeMap` of everything
            that blocks a candidate.
        :param allocated_map: a :class:`~murano_cidr.pool.FreeMap` of the
            driver's own live allocations alone, if it keeps any.
        :returns: a :class:`~murano_cidr.exceptions.PoolExhausted`.
        """
        allocated = allocated_map.blocked if allocated_map else 0
        return exceptions.PoolExhausted(
            pool=str(pool), prefixlen=pool.prefixlen,
            scope=scope if scope is not None else "(none)",
            size=pool.size, allocated=allocated,
            taken=free_map.blocked - allocated)

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
            at the moment the driver decides).
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

        A driver that holds a short-lived reservation may drop it; others do
        nothing.

        :param owner: the owner passed to :meth:`allocate`.
        :raises murano_cidr.exceptions.InvalidArgument: for a bad owner.
        :raises murano_cidr.exceptions.ReservationLost: if the reservation
            expired before it was confirmed (drivers with reservations).
        """
        validate_id(owner, "owner")

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

        :returns: an :class:`Allocation`, or None.
        :raises murano_cidr.exceptions.NotSupported: if the driver keeps no
            state.
        """

    @abc.abstractmethod
    def list(self, scope=None):
        """Return the live allocations, of one scope or of all.

        :param scope: a scope, or None for every allocation.
        :returns: a list of :class:`Allocation`, sorted by scope and CIDR.
        :raises murano_cidr.exceptions.NotSupported: if the driver keeps no
            state.
        """

    def import_allocations(self, allocations):
        """Record CIDRs that already exist, all or nothing.

        Used when a live cloud switches to a driver that keeps state, so the
        networks it already has are never handed out again. An allocation
        already recorded identically is skipped (importing is idempotent).

        :param allocations: an iterable of :class:`Allocation`.
        :returns: the list of :class:`Allocation` newly recorded.
        :raises murano_cidr.exceptions.AllocationConflict: if one overlaps a
            live allocation of its scope (or another one of the batch);
            nothing is recorded.
        :raises murano_cidr.exceptions.OwnerConflict: if an owner already
            holds another CIDR; nothing is recorded.
        :raises murano_cidr.exceptions.NotSupported: if the driver keeps no
            state.
        """
        raise exceptions.NotSupported(
            driver=self.name, action="import allocations",
            reason="it keeps no state")

    def usage(self, scope=None, ip_version=4):
        """Count what a scope uses of the pool.

        :param scope: the scope, or None for allocations without a scope.
        :param ip_version: 4 or 6.
        :returns: a dictionary with ``scope``, ``ip_version``,
            ``allocations`` and the counts of
            :meth:`murano_cidr.pool.Pool.usage`.
        :raises murano_cidr.exceptions.NotSupported: if the driver keeps no
            state.
        """
        pool = self.pool(ip_version)
        allocations = [a for a in self.list(scope=scope)
                       if a.scope == scope and a.ip_version == ip_version]
        result = pool.usage(taken_mod.TakenSet.from_taken(
            [a.cidr for a in allocations], pool.version))
        result.update(scope=scope, ip_version=ip_version,
                      allocations=len(allocations))
        return result

    @contextlib.contextmanager
    def reserve(self, owner, scope=None, taken=(), ip_version=4):
        """Allocate, let the caller create the subnet, then confirm.

        If the body raises, the allocation is released and the error
        re-raised::

            with allocator.reserve(net_id, scope=router_id,
                                   taken=read_router) as cidr:
                create_subnet(cidr)

        :returns: a context manager yielding the CIDR.
        :raises: whatever :meth:`allocate`, :meth:`confirm` or the body
            raise.
        """
        cidr = self.allocate(owner, scope=scope, taken=taken,
                             ip_version=ip_version)
        try:
            yield cidr
        except BaseException:
            with contextlib.suppress(exceptions.MuranoCidrException):
                self.release(owner)
            raise
        self.confirm(owner)

    def close(self):
        """Release any connection or lock the driver holds."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


class StatelessDriver(AllocatorDriver):
    """Base class of drivers that remember nothing between calls.

    Such a driver decides from the pool and ``taken`` alone: ``release``
    always returns False and ``get``/``list`` raise
    :class:`~murano_cidr.exceptions.NotSupported`, because only Neutron
    knows which subnets exist.
    """

    keeps_state = False

    @abc.abstractmethod
    def pick(self, owner, pool, free_map):
        """Choose one free candidate.

        :param owner: the owner asking.
        :param pool: the :class:`~murano_cidr.pool.Pool`.
        :param free_map: a :class:`~murano_cidr.pool.FreeMap` with at least
            one free candidate.
        :returns: the index of a free candidate.
        """

    def allocate(self, owner, scope=None, taken=(), ip_version=4):
        validate_id(owner, "owner")
        validate_id(scope, "scope", allow_none=True)
        pool = self.pool(ip_version)
        taken_set = taken_mod.TakenSet.from_taken(taken, pool.version)
        free_map = pool.free_map(taken_set)
        if free_map.free == 0:
            raise self.exhausted(pool, scope, free_map)
        cidr = pool.cidr(self.pick(owner, pool, free_map))
        LOG.debug("Picked %s for %s in scope %s (%d of %d free)", cidr,
                  owner, scope, free_map.free, pool.size)
        return cidr

    def release(self, owner):
        validate_id(owner, "owner")
        return False

    def _no_state(self, action):
        return exceptions.NotSupported(
            driver=self.name, action=action,
            reason="it keeps no state; the subnets Neutron reports are the "
            "only record of what is allocated")

    def get(self, owner):
        validate_id(owner, "owner")
        raise self._no_state("show an allocation")

    def list(self, scope=None):
        validate_id(scope, "scope", allow_none=True)
        raise self._no_state("list allocations")
