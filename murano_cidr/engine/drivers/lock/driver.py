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

"""The ``lock`` driver: reservations held as records in a lock service.

One host: oslo.concurrency file locks; many hosts: the tooz coordination
service named by ``[cidr_allocator] coordination_url``. The pick itself is
:mod:`~murano_cidr.engine.drivers.lock.picking`; this module holds the
contract and the reservations this process made (:class:`Holdings`).
"""

import collections
import datetime
import threading
import time

from oslo_log import log as logging

from murano_cidr.engine import allocation as allocation_mod
from murano_cidr.engine.drivers import base
from murano_cidr.engine.drivers import capabilities as caps
from murano_cidr.engine.drivers import lock as lock_package
from murano_cidr.engine.drivers.lock import backend as backend_mod
from murano_cidr.engine.drivers.lock import options as lock_options
from murano_cidr.engine.drivers.lock import picking
from murano_cidr.engine import taken as taken_mod
from murano_cidr import exceptions
from murano_cidr import opts

LOG = logging.getLogger(__name__)

#: How many dropped owners a process remembers, so that their late
#: confirm says the reservation was lost.
DROPPED_KEPT = 10000


#: A reservation this process made, from allocate to confirm; its
#: deadline is on the holdings' clock.
Held = collections.namedtuple("Held", "allocation reservation deadline")


class Holdings(object):
    """The reservations of one driver, by owner, dropped after ``timeout``.

    A handle older than ``timeout`` (on the monotonic ``clock``) is dropped
    at the next allocation, its records deleted if still its own; its owner
    is remembered (the last :data:`DROPPED_KEPT`) so that a late confirm
    says the reservation was lost.
    """

    def __init__(self, timeout, clock=time.monotonic):
        self.timeout = timeout
        self._clock = clock
        # NOTE: never held while the lock service is asked.
        self._mutex = threading.Lock()
        self._held = {}
        self._dropped = {}

    def get(self, owner):
        """Return the :class:`Held` of ``owner``, or None."""
        with self._mutex:
            return self._held.get(owner)

    def values(self):
        """Return every :class:`Held`, as a new list."""
        with self._mutex:
            return list(self._held.values())

    def add(self, owner, allocation, reservation):
        """Hold ``reservation`` for ``owner`` until popped or expired.

        :returns: None, or the :class:`Held` another thread added first;
            ``reservation`` is then not kept.
        """
        with self._mutex:
            other = self._held.get(owner)
            if other is not None:
                return other
            self._held[owner] = Held(allocation, reservation,
                                     self._clock() + self.timeout)
            self._dropped.pop(owner, None)
        return None

    def pop(self, owner):
        """Stop holding ``owner``; return its :class:`Held`, or None."""
        with self._mutex:
            return self._held.pop(owner, None)

    def pop_dropped(self, owner):
        """Forget that ``owner`` was dropped; return its Allocation or None."""
        with self._mutex:
            return self._dropped.pop(owner, None)

    def pop_all(self):
        """Stop holding anything; return what was held."""
        with self._mutex:
            held, self._held = list(self._held.values()), {}
        return held

    def expire(self):
        """Drop every reservation whose deadline has passed; return them."""
        now = self._clock()
        with self._mutex:
            due = [(owner, held) for owner, held in self._held.items()
                   if held.deadline <= now]
            for owner, held in due:
                del self._held[owner]
                self._dropped[owner] = held.allocation
            for owner in list(self._dropped)[:-DROPPED_KEPT or None]:
                del self._dropped[owner]
        for owner, held in due:
            allocation = held.allocation
            LOG.warning("Dropped the reservation of %s for %s in scope %s: "
                        "not confirmed within reservation_timeout (%s s); "
                        "any engine may now allocate it when the router "
                        "shows no subnet overlapping it", allocation.cidr,
                        owner, allocation.scope, self.timeout)
            held.reservation.release()
        return [held for _owner, held in due]


def describe(records, own, hold, now=None):
    """Say who holds the reservations in the way, and when they drop.

    :param records: the live :class:`~.picking.Record` met, one each.
    :param own: the owners this process reserved for.
    :param hold: ``reservation_timeout``.
    :returns: ``"; ..."`` for :class:`~murano_cidr.exceptions.PoolExhausted`,
        or ``""``.
    """
    if not records:
        return ""
    now = time.time() if now is None else now
    mine = sum(1 for r in records if r.owner in own)
    known = [r for r in records if r.token != "?"]
    text = ("; %d held by unconfirmed reservations (%d by this engine "
            "process)" % (len(records), mine))
    if known:
        oldest = min(r.created for r in known)
        text += (", the oldest made %d s ago, at %s UTC; the first drops "
                 "at %s UTC" % (max(0, now - oldest), picking.utc(oldest),
                                picking.utc(min(r.expires for r in known))))
    return text + (
        ". A reservation drops when its engine confirms it, when any engine "
        "process releases its owner (a delete of the deployment, on any "
        "engine), or reservation_timeout = %d s after it was made, whether "
        "or not its engine lives; its CIDR is then handed out again only if "
        "the router shows no subnet overlapping it" % hold)


class LockDriver(base.AllocatorDriver):
    """Reserve each CIDR with records in a lock service until it is confirmed.

    Guaranteed: two live reservations of a scope never hold overlapping
    CIDRs, across threads, processes and hosts. :meth:`allocate` never
    returns a CIDR whose records it did not write; it raises
    :class:`~murano_cidr.exceptions.LockUnavailable` holding nothing.
    :meth:`confirm` raises :class:`~murano_cidr.exceptions.ReservationLost`
    when a record is no longer this reservation's or cannot be checked.
    Every call is bounded by ``lock_timeout`` and ``lock_wait_timeout``.
    Nothing is kept once a reservation is confirmed: the router's subnets
    are the record. Where each lock service keeps the records, the errors
    and what is not guaranteed: :doc:`/reference/lock-driver`.

    :param conf: an :class:`oslo_config.cfg.ConfigOpts`.
    :raises murano_cidr.exceptions.InvalidConfig: if the pool, the lock
        directory or ``coordination_url`` is invalid, or the backend's client
        library is not installed.
    """

    name = "lock"
    capabilities = frozenset({caps.Capability.KEEPS_STATE,
                              caps.Capability.HOLDS_RESERVATIONS,
                              caps.Capability.PREVENTS_COLLISIONS})
    _RESERVATIONS_ONLY = (
        "it keeps only the reservations in flight, as records in the lock "
        "service until they are confirmed; the subnets on the router are "
        "the only record of what is allocated; use the db driver for "
        "allocations every process sees")
    limitations = {caps.Capability.SHARES_STATE: _RESERVATIONS_ONLY,
                   caps.Capability.OUTLIVES_PROCESS: _RESERVATIONS_ONLY}
    extras = lock_package.EXTRAS
    shared_store_option = ("[cidr_allocator] coordination_url (Redis, etcd "
                           "or ZooKeeper)")

    @classmethod
    def list_opts(cls):
        return lock_options.list_opts()

    def __init__(self, conf):
        super().__init__(conf)
        group = conf[opts.GROUP]
        self._block_prefixlen = {4: group.reservation_prefixlen,
                                 6: group.ipv6_reservation_prefixlen}
        for version, pool in self.pools.items():
            option = ("reservation_prefixlen" if version == 4
                      else "ipv6_reservation_prefixlen")
            count = 2 ** max(0, self._block_prefixlen[version]
                             - pool.prefixlen)
            if count > backend_mod.MAX_BLOCKS:
                raise exceptions.InvalidConfig(
                    option=option,
                    reason="/%d blocks would take %d locks for each /%d "
                    "subnet, more than %d; use a shorter prefix"
                    % (self._block_prefixlen[version], count,
                       pool.prefixlen, backend_mod.MAX_BLOCKS))
        self.backend = backend_mod.open_backend(conf)
        self._hold = group.reservation_timeout
        self._held = Holdings(group.reservation_timeout)

    @property
    def single_host_store(self):
        """File locks (or tooz's file backend), which serve one host."""
        url = (self.conf[opts.GROUP].coordination_url or "").strip()
        if not url or url.startswith("file:"):
            return self.backend.description
        return None

    def _existing(self, owner, scope, ip_version):
        held = self._held.get(owner)
        if held is None:
            return None
        allocation = held.allocation
        if allocation.scope != scope or allocation.ip_version != ip_version:
            raise exceptions.OwnerConflict(
                owner=owner, cidr=allocation.cidr,
                scope=allocation.scope if allocation.scope is not None
                else "(none)")
        return allocation.cidr

    def exhausted(self, pool, scope, free_map, allocated_map=None,
                  held_back="", holders=()):
        """The exhaustion error, with who holds the reservations and how long.

        See :meth:`murano_cidr.engine.drivers.base.AllocatorDriver.exhausted`.

        :param holders: the live :class:`~.picking.Record` met.
        """
        own = {h.allocation.owner for h in self._held.values()}
        text = describe(holders, own, self._hold)
        reserved = allocated_map.blocked if allocated_map else 0
        recorded = pool.free_map(taken_mod.TakenSet.from_taken(
            [h.cidr for h in holders if h.token != "?"],
            pool.version)).blocked
        if reserved > recorded:
            text += ("; %d being reserved by other engines at that moment"
                     % (reserved - recorded))
        return super().exhausted(pool, scope, free_map, allocated_map,
                                 held_back=text + held_back)

    def allocate(self, owner, scope=None, taken=(), ip_version=4):
        """Reserve a CIDR for ``owner`` until :meth:`confirm`.

        See :meth:`murano_cidr.engine.drivers.base.AllocatorDriver.allocate`.
        A callable ``taken`` is read under the scope's lock, and again once
        the reservation is held.

        :returns: the CIDR; the one ``owner`` already holds in this
            process, if any.
        :raises murano_cidr.exceptions.InvalidArgument: for a bad owner,
            scope, IP version or ``taken``; nothing is held.
        :raises murano_cidr.exceptions.OwnerConflict: if ``owner`` holds a
            CIDR of another scope or IP version in this process.
        :raises murano_cidr.exceptions.PoolExhausted: if no candidate is
            free or unreserved.
        :raises murano_cidr.exceptions.LockUnavailable: if the lock service
            cannot be reached; nothing is held.
        """
        owner = allocation_mod.validate_owner(owner)
        scope = allocation_mod.validate_scope(scope)
        pool = self.pool(ip_version)
        self._held.expire()
        existing = self._existing(owner, scope, ip_version)
        if existing is not None:
            return existing
        cidr, reservation = picking.reserve(
            self.backend, self._block_prefixlen[pool.version], pool, owner,
            scope, taken, self._hold, self.exhausted)
        allocation = allocation_mod.Allocation(
            owner=owner, cidr=cidr, scope=scope, ip_version=ip_version,
            confirmed=False,
            created_at=datetime.datetime.now(datetime.timezone.utc))
        if self._held.add(owner, allocation, reservation) is not None:
            # Another thread allocated for the same owner meanwhile.
            reservation.release()
            return self._existing(owner, scope, ip_version)
        LOG.debug("Reserved %s for %s in scope %s with %s", cidr, owner,
                  scope, self.backend.description)
        return cidr

    def confirm(self, owner):
        """Delete the reservation's records: the subnet of ``owner`` exists.

        From then on the router is the only record. An owner this process
        holds no reservation of is ignored.

        :raises murano_cidr.exceptions.InvalidArgument: for a bad owner.
        :raises murano_cidr.exceptions.ReservationLost: if the records were
            lost (expired, released or taken over elsewhere, dropped here
            after ``reservation_timeout``) or cannot be checked (the lock
            service is unreachable); the reservation is forgotten.
        """
        owner = allocation_mod.validate_owner(owner)
        held = self._held.pop(owner)
        if held is None:
            dropped = self._held.pop_dropped(owner)
            if dropped is not None:
                reason = ("it was not confirmed within reservation_timeout "
                          "= %d s" % self._held.timeout)
                LOG.warning("Reservation of %s for %s in scope %s was "
                            "lost: %s", dropped.cidr, owner, dropped.scope,
                            reason)
                raise exceptions.ReservationLost(cidr=dropped.cidr,
                                                 owner=owner, reason=reason)
            return
        allocation = held.allocation
        try:
            still_held = held.reservation.release_checked()
            reason = ("its reservation expired, was released by another "
                      "engine process or was taken over")
        except exceptions.LockUnavailable as e:
            still_held = False
            reason = ("its records could not be checked: %s is "
                      "unreachable: %s" % (self.backend.description,
                                           e.kwargs.get("reason", e)))
        if not still_held:
            LOG.warning("Reservation of %s for %s in scope %s was lost: %s",
                        allocation.cidr, owner, allocation.scope, reason)
            raise exceptions.ReservationLost(cidr=allocation.cidr,
                                             owner=owner, reason=reason)
        self._drop_index(held.reservation)
        LOG.debug("Confirmed %s for %s", allocation.cidr, owner)

    def _drop_index(self, reservation):
        try:
            picking.drop_index(self.backend.records, reservation)
        except exceptions.LockUnavailable as e:
            # NOTE: an index whose records are gone frees nothing.
            LOG.warning("Could not delete the owner index of %s: %s",
                        reservation.record.owner, e.kwargs.get("reason", e))

    def release(self, owner):
        """Delete the reservation of ``owner``, whichever process made it.

        :returns: True if a reservation was dropped; False otherwise (a
            confirmed CIDR is free once its subnet left the router).
        :raises murano_cidr.exceptions.InvalidArgument: for a bad owner.
        :raises murano_cidr.exceptions.LockUnavailable: if the lock service
            cannot be reached; the reservation then lasts until released
            again or ``reservation_timeout`` has passed.
        """
        owner = allocation_mod.validate_owner(owner)
        held = self._held.pop(owner)
        self._held.pop_dropped(owner)
        if held is None:
            dropped = picking.release(self.backend.records, owner)
        else:
            dropped = held.reservation.release_checked()
            self._drop_index(held.reservation)
        if dropped:
            LOG.debug("Released the reservation of %s", owner)
        return dropped

    def get(self, owner):
        """Return what this process holds for ``owner`` (None if nothing)."""
        owner = allocation_mod.validate_owner(owner)
        held = self._held.get(owner)
        return held.allocation if held is not None else None

    def list(self, scope=None):
        """Return the reservations this process holds, of a scope or all."""
        scope = allocation_mod.validate_scope(scope)
        allocations = [h.allocation for h in self._held.values()]
        if scope is not None:
            allocations = [a for a in allocations if a.scope == scope]
        return sorted(allocations,
                      key=lambda a: (a.scope is not None, a.scope or "",
                                     a.ip_version,
                                     taken_mod.parse_cidr(a.cidr).first))

    def close(self):
        """Delete the reservations this process holds, then disconnect."""
        for h in self._held.pop_all():
            h.reservation.release()
            self._drop_index(h.reservation)
        self.backend.close()
