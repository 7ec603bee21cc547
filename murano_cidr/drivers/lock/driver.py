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

"""The ``lock`` driver: reservations held as external locks.

One host: oslo.concurrency file locks. Many hosts: a tooz coordination
service named by ``[cidr_allocator] coordination_url``.
"""

import datetime

from oslo_log import log as logging

from murano_cidr import allocation as allocation_mod
from murano_cidr.drivers import base
from murano_cidr.drivers import capabilities as caps
from murano_cidr.drivers import lock as lock_package
from murano_cidr.drivers.lock import backend as backend_mod
from murano_cidr.drivers.lock import holdings
from murano_cidr.drivers.lock import options as lock_options
from murano_cidr.drivers.lock import picking
from murano_cidr.drivers.lock import reservations
from murano_cidr import exceptions
from murano_cidr import opts
from murano_cidr import taken as taken_mod

LOG = logging.getLogger(__name__)


def backend_from_conf(conf):
    """Build the lock backend ``conf`` asks for.

    :param conf: a configuration object with the ``lock`` driver's options
        registered.
    :returns: a :class:`~murano_cidr.drivers.lock.backend.LockBackend`.
    :raises murano_cidr.exceptions.InvalidConfig: naming the option at
        fault.
    """
    group = conf[opts.GROUP]
    url = group.coordination_url
    # NOTE: each back end is imported here, so that an engine loads the
    # one it uses only: on file locks neither tooz nor the tooz back end,
    # on a lock service not the file locks.
    if url is not None and url.strip():
        from murano_cidr.drivers.lock import tooz_backend
        return tooz_backend.ToozLockBackend(url.strip(), group.lock_timeout,
                                            group.lock_wait_timeout)
    from murano_cidr.drivers.lock import file_backend
    return file_backend.FileLockBackend(lock_options.lock_path(conf))


class LockDriver(base.AllocatorDriver):
    """Reserve each CIDR with a record in a lock service until it is confirmed.

    ``allocate`` reads ``taken`` and tries, in random order among the free
    candidates, to reserve every aligned block of ``reservation_prefixlen``
    the candidate overlaps (so that engines whose subnet sizes differ, a
    /23 and a /24, still need a block in common). A block is reserved by a
    *reservation record* the lock service keeps
    (:mod:`~murano_cidr.drivers.lock.reservations`): ``(owner, scope,
    CIDR, token, created, expires)``, ``expires`` being
    ``reservation_timeout`` after it was made. Every change of a record
    is conditional (written only where none is live, deleted only if it
    is still this reservation's), so of two engines racing for a block
    one alone writes its record, and no lock is taken around it. A
    candidate any of whose blocks holds a live record is skipped. Once
    its records are written, ``allocate`` reads ``taken`` again (when
    ``taken`` is a callable) and gives the CIDR up if its subnet appeared
    meanwhile; then it writes the owner's *index* record (the names of
    its block records). Where the lock service queues its waiters (file
    locks, ZooKeeper) ``allocate`` first takes the scope's lock, so
    engines pick one at a time in a scope; on etcd and Redis, where
    waiting for a lock means polling it and a polled lock goes back to
    whoever just released it, engines do not wait for each other
    (:mod:`~murano_cidr.drivers.lock.backend`).

    A reservation is the cluster's, not the process's. It is dropped by
    :meth:`confirm` in the process that allocated (the subnet now exists,
    Neutron reports it from then on), by :meth:`release` in any engine
    process or host (it finds the records through the owner's index: the
    delete of a deployment that failed before its confirm frees its CIDR
    at once, whichever worker runs it), or once ``reservation_timeout``
    has passed. Its holder's death changes nothing: the records outlive
    the process, its file locks and its session. An expired record frees
    its blocks only to an allocation whose ``taken`` shows no subnet
    overlapping the candidate.

    Backends, and where they keep the records:

    * ``coordination_url`` unset: oslo.concurrency file locks under
      ``[oslo_concurrency] lock_path`` (``<state_path>/locks`` when unset),
      which exclude the threads and processes of one host; records are
      small files beside them (``<lock>-reservation.json``), written to a
      temporary file renamed over the record, each change under a file
      lock of the record's own. Expiry is read on this host's clock.
    * ``coordination_url = redis://[:password@]host:port[?options]``: a
      tooz coordinator for the locks; records are keys with a ``PX``
      expiry, written with ``SET NX`` and deleted by a compare-and-delete
      script through a redis-py client of the driver's own.
    * ``etcd3+http://h1:2379,h2:2379,h3:2379`` (every member of the
      cluster, or one): keys on a lease of the hold time, created by a
      transaction that requires the key absent, deleted by one that
      compares the value (an etcd3gw client of the driver's own per
      member; a call goes to the next member when one cannot be
      reached, :mod:`~murano_cidr.drivers.lock.etcd_members`). No tooz
      coordinator is built on etcd.
    * ``zookeeper://host:2181``: persistent znodes under
      ``/murano-cidr/reservations`` with the expiry in their data,
      replaced and deleted by version (a kazoo client of the driver's
      own; expiry on the engines' clocks, which must agree within
      seconds, as NTP keeps them).
    * ``file:///path``: tooz's file locks, records in that directory.
      Other tooz back ends (``ipc://``, databases, memcached) cannot keep
      records and are refused with ``InvalidConfig``.

    Errors:

    * The lock service cannot be reached: :meth:`allocate` raises
      :class:`~murano_cidr.exceptions.LockUnavailable` and holds nothing
      (a record it wrote before the failure is deleted, or expires). It
      never returns a CIDR whose records it did not write. :meth:`release`
      raises it too: it must ask the service.
    * A reservation lost before :meth:`confirm` (it expired, a
      :meth:`release` in another process deleted it, the lock service lost
      its data, or the service cannot be asked): :meth:`confirm` raises
      :class:`~murano_cidr.exceptions.ReservationLost` and forgets the
      reservation. A caller whose subnet is on the router already goes
      on: the router is the record, and every engine reads it (see
      :meth:`murano_cidr.drivers.base.AllocatorDriver.confirm`). A caller
      that has no subnet yet treats the CIDR as possibly given to another
      engine: it releases it and allocates again. :meth:`confirm` learns
      it from the compare-and-delete of each of its records.
    * Every call to a tooz service is bounded: a scope lock (ZooKeeper,
      tooz's file backend) is waited for about ``lock_wait_timeout``
      seconds, any other request fails within about ``lock_timeout``
      seconds when the service does not answer (each request of the
      records' own clients too), and :meth:`close` never waits longer
      than ``lock_timeout`` for the heartbeat to stop.

    State: the lock service holds each reservation's records, from
    :meth:`allocate` to :meth:`confirm`, :meth:`release` or
    ``reservation_timeout``; this process keeps a handle of each
    reservation it made, for that long at most. Nothing is kept once a
    reservation is confirmed, here or anywhere: the subnet on the router
    (``taken``) is the one record, which every engine process and host
    reads. :meth:`allocate` is idempotent per owner while this process
    holds its reservation; :meth:`get`, :meth:`list` and :meth:`usage`
    answer with the reservations this process made (a reservation another
    process released stays listed here until this process confirms it,
    or its timeout passes). A scope of None is a scope of its own, shared
    by every caller that passes None.

    Usage considerations (what is and is not guaranteed):

    * Two live reservations of a scope never hold overlapping CIDRs,
      across threads, processes and (with a lock service) hosts: every
      block a reservation holds has its record, and a record is written
      only where none is live.
    * Nothing is guaranteed once a reservation is confirmed: the subnet is
      Neutron's to report, and ``taken`` must include it. A caller that
      confirms before the subnet exists, or passes a stale ``taken`` (or
      none), can get a CIDR that overlaps it.
    * An engine whose :meth:`confirm` succeeded held its records from the
      moment :meth:`allocate` returned: the compare-and-delete of each
      found the token written at the allocation, and nothing replaces a
      live record or deletes another reservation's.
    * ``reservation_timeout`` (default 7200 s, shared with the ``db``
      driver) is how long a reservation never confirmed nor released
      holds its CIDR, its engine dead or alive: it must cover a stack's
      network creation with its retries (Heat's stack timeout defaults to
      an hour). A subnet created after its reservation was dropped may
      meet another network's, and Neutron refuses one of the two. The
      process that allocated drops its own reservations that old at its
      next allocation (:mod:`~murano_cidr.drivers.lock.holdings`); a
      late :meth:`confirm` raises ``ReservationLost``, before that drop
      if the records are no longer its own, after it in any case.
    * Engines of an older release, which hold a reservation as a lock
      for as long as they live, and engines of this one, which hold it as
      a record, do not see each other's reservations: upgrade every engine
      of a cloud at once (stop them all, then start them upgraded).
    * File locks protect one host only. Never delete lock or record
      files while engines run (a new lock file would let a second holder
      in); lock files are small, one per scope ever picked in and 256 at
      most for the records, record files one per block reserved and
      owner (an expired one stays until its block is reserved again or
      its owner released).
    * Every engine of a cloud must use the same ``reservation_prefixlen``:
      engines that reserve blocks of different sizes do not exclude each
      other.
    * Redis: one server is consistent. Use AOF persistence: a restart
      without data drops every reservation. With Sentinel a record is
      used only once the master the Sentinels name has a replica
      acknowledging it (``WAIT 1``,
      :mod:`~murano_cidr.drivers.lock.redis_sentinel`): at least one
      replica must be online, and a master stalled then resumed no longer
      grants the new master's records twice (measured,
      ``doc/source/admin/lock-services.rst``). Replication stays
      asynchronous: with two replicas or more, or a replica lost with
      the master, an acknowledged record can still be lost.
    * etcd3: a record is a key on a lease of ``reservation_timeout``
      seconds; no tooz lock is taken.
    * ZooKeeper: a scope lock lives as long as the session
      (timeout ``lock_timeout``); with no server answering for that long,
      calls fail and the next one starts a new session. The server must
      allow the session timeout (``minSessionTimeout``,
      ``maxSessionTimeout``). Records are persistent znodes: a session's
      end leaves them.
    * What each tooz backend's client is told, and why:
      :mod:`murano_cidr.drivers.lock.tooz_clients`.
    * Build the driver after forking: a tooz heartbeat thread does not
      survive ``fork()``.

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
        self.backend = backend_from_conf(conf)
        self._hold = group.reservation_timeout
        self._held = holdings.Holdings(group.reservation_timeout)

    shared_store_option = ("[cidr_allocator] coordination_url (Redis, etcd "
                           "or ZooKeeper)")

    @property
    def single_host_store(self):
        """File locks (or tooz's file backend), which serve one host."""
        url = (self.conf[opts.GROUP].coordination_url or "").strip()
        if not url or url.startswith("file:"):
            return self.backend.description
        return None

    # -- helpers -----------------------------------------------------------

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

        See :meth:`murano_cidr.drivers.base.AllocatorDriver.exhausted`.

        :param holders: the live reservation records met
            (:class:`~murano_cidr.drivers.lock.reservations.Record`).
        """
        own = {h.allocation.owner for h in self._held.values()}
        text = reservations.describe(holders, own, self._hold)
        reserved = allocated_map.blocked if allocated_map else 0
        recorded = pool.free_map(taken_mod.TakenSet.from_taken(
            [h.cidr for h in holders if h.token != "?"],
            pool.version)).blocked
        if reserved > recorded:
            text += ("; %d being reserved by other engines at that moment"
                     % (reserved - recorded))
        return super().exhausted(pool, scope, free_map, allocated_map,
                                 held_back=text + held_back)

    # -- the contract ------------------------------------------------------

    def allocate(self, owner, scope=None, taken=(), ip_version=4):
        """Reserve a CIDR for ``owner`` until :meth:`confirm`.

        See :meth:`murano_cidr.drivers.base.AllocatorDriver.allocate`. A
        callable ``taken`` is read once the scope's lock is held, and again
        once the reservation is.

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
        read_taken = picking.TakenReader(taken, pool.version)

        def new_record(cidr):
            return reservations.Record.new(owner, scope, cidr, self._hold)

        with self.backend.scope_lock(backend_mod.scope_lock_name(scope)):
            cidr, reservation = picking.pick(
                self.backend, self._block_prefixlen[pool.version], scope,
                pool, read_taken, new_record, self.exhausted)
        try:
            reservations.write_index(self.backend.records, reservation)
        except BaseException:
            reservation.release()
            raise
        allocation = allocation_mod.Allocation(
            owner=owner, cidr=cidr, scope=scope, ip_version=ip_version,
            confirmed=False,
            created_at=datetime.datetime.now(datetime.timezone.utc))
        other = self._held.add(owner, allocation, reservation)
        if other is not None:
            # Another thread allocated for the same owner meanwhile.
            reservation.release()
            return self._existing(owner, scope, ip_version)
        LOG.debug("Reserved %s for %s in scope %s with %s", cidr, owner,
                  scope, self.backend.description)
        return cidr

    def confirm(self, owner):
        """Delete the reservation's records: the subnet of ``owner`` exists.

        From then on the router is the only record: nothing of ``owner``
        is kept, here or in the lock service. Confirming an owner this
        process holds no reservation of (unknown, already confirmed or
        released, or reserved by another process) does nothing.

        :param owner: the owner passed to :meth:`allocate`.
        :raises murano_cidr.exceptions.InvalidArgument: for a bad owner.
        :raises murano_cidr.exceptions.ReservationLost: if the reservation's
            records were lost (expired, released by another process, taken
            over, or dropped by this process after
            ``reservation_timeout``), or cannot be checked because the lock
            service is unreachable; the reservation is forgotten.
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
            reservations.drop_index(self.backend.records, reservation)
        except exceptions.LockUnavailable as e:
            # NOTE: an index whose records are gone frees nothing and
            # expires with them.
            LOG.warning("Could not delete the owner index of %s: %s",
                        reservation.record.owner, e.kwargs.get("reason", e))

    def release(self, owner):
        """Delete the reservation of ``owner``, whichever process made it.

        The records are found through the owner's index record, so a
        delete in any engine process or host frees a reservation that was
        never confirmed, at once.

        :returns: True if a reservation was dropped; False otherwise: a
            confirmed CIDR is kept from other engines by its subnet alone,
            and is free once the subnet left the router.
        :raises murano_cidr.exceptions.InvalidArgument: for a bad owner.
        :raises murano_cidr.exceptions.LockUnavailable: if the lock service
            cannot be reached; the reservation then lasts until it is
            released again or ``reservation_timeout`` has passed.
        """
        owner = allocation_mod.validate_owner(owner)
        held = self._held.pop(owner)
        self._held.pop_dropped(owner)
        if held is None:
            dropped = reservations.release(self.backend.records, owner)
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
