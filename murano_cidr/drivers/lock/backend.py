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

"""What the ``lock`` driver needs from a lock service, and the lock names.

Two locks are used, both named here so that every engine, whatever its
backend object, agrees on them:

* the *scope lock*, held only while one caller picks a CIDR for a scope,
  where the service queues its waiters (file locks, ZooKeeper): it saves
  engines from trying the same candidates at once. Where waiting for a lock
  means polling it (etcd3, Redis) it is not taken, because polling hands
  the lock back to whoever just released it (the others sleep between
  polls) and starves them; the reservation locks alone keep two engines
  from holding overlapping CIDRs;
* *block locks* per (scope, block), taken without waiting and held only
  while the block's reservation record is read and written
  (:mod:`~murano_cidr.drivers.lock.reservations`): the record, not the
  lock, holds the block from ``allocate`` until ``confirm``, ``release``
  (in any process) or ``reservation_timeout``. A block is an aligned
  network of a fixed prefix length (``reservation_prefixlen``); a CIDR is
  reserved by holding every block it overlaps, so two overlapping CIDRs
  of any sizes always need a block in common.
"""

import abc
import hashlib

import netaddr

from murano_cidr import exceptions

#: Prefix of every lock name, so the locks are recognisable in a shared
#: lock directory or Redis database.
PREFIX = "murano-cidr"


def _scope_digest(scope):
    # NOTE: a scope is any printable string, possibly with "/" or spaces;
    # a digest makes a name that is safe as a file name and as a key, and
    # None (no scope) cannot be confused with a scope called "None".
    key = "n:" if scope is None else "s:" + scope
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def scope_lock_name(scope):
    """Return the name of the lock that serialises picks in ``scope``.

    :param scope: a scope, or None.
    :returns: a string usable as a file name and as a tooz lock name.
    """
    return "%s-scope-%s" % (PREFIX, _scope_digest(scope))


def reservation_lock_name(scope, cidr):
    """Return the name of the lock that reserves block ``cidr`` in ``scope``.

    :param scope: a scope, or None.
    :param cidr: a block's CIDR string, e.g. ``"10.0.3.0/24"``.
    :returns: a string usable as a file name and as a tooz lock name.
    """
    return "%s-%s-%s" % (PREFIX, _scope_digest(scope),
                         cidr.replace("/", "_").replace(":", "."))


class Reservation(object, metaclass=abc.ABCMeta):
    """A reservation lock this process holds."""

    @abc.abstractmethod
    def still_held(self):
        """Tell whether the lock is still ours.

        :returns: False if it expired or was taken over.
        :raises murano_cidr.exceptions.LockUnavailable: if the lock service
            cannot be asked.
        """

    @abc.abstractmethod
    def release(self):
        """Release the lock; never raises (a lost lock is already free)."""

    def release_checked(self):
        """Release the lock and tell whether it was ours until then.

        :returns: False if it expired or was taken over before.
        :raises murano_cidr.exceptions.LockUnavailable: if the lock service
            cannot be asked; the lock is then released if the service
            allows it, or expires.
        """
        try:
            held = self.still_held()
        finally:
            self.release()
        return held


#: The most blocks one reservation may lock (and so hold open, for file
#: locks).
MAX_BLOCKS = 256


def blocks(net, prefixlen):
    """Return the aligned blocks of ``prefixlen`` that ``net`` overlaps.

    :param net: a :class:`netaddr.IPNetwork`.
    :param prefixlen: the blocks' prefix length.
    :returns: a list of :class:`netaddr.IPNetwork`, in address order: one
        block (the one containing ``net``) if ``net`` is smaller than a
        block, else the blocks ``net`` is cut into.
    """
    if net.prefixlen >= prefixlen:
        return [netaddr.IPNetwork((net.first, prefixlen),
                                  version=net.version).cidr]
    return list(net.cidr.subnet(prefixlen))


class BlockReservation(Reservation):
    """Several reservation locks held as one.

    :param reservations: the :class:`Reservation` of every block.
    """

    def __init__(self, reservations):
        self.reservations = list(reservations)

    def still_held(self):
        return all(r.still_held() for r in self.reservations)

    def release(self):
        for reservation in self.reservations:
            reservation.release()

    def release_checked(self):
        held = True
        error = None
        for reservation in self.reservations:
            try:
                held = reservation.release_checked() and held
            except exceptions.LockUnavailable as e:
                error = error or e
        if error is not None:
            raise error
        return held


class LockBackend(object, metaclass=abc.ABCMeta):
    """A lock service, as the ``lock`` driver uses it.

    :ivar description: what to name in messages (never a password).
    :ivar records: the
        :class:`~murano_cidr.drivers.lock.reservations.RecordStore` that
        keeps the reservation records.
    """

    description = None
    records = None

    @abc.abstractmethod
    def scope_lock(self, name):
        """Return a context manager holding the lock ``name`` while open.

        It waits for the lock, or holds nothing where the backend does not
        serialise picks (see the module's documentation).

        :raises murano_cidr.exceptions.LockUnavailable: if the lock service
            cannot be reached, or the wait times out.
        """

    @abc.abstractmethod
    def try_reserve(self, name):
        """Take the lock ``name`` without waiting and keep it.

        :returns: a :class:`Reservation`, or None if someone else holds it.
        :raises murano_cidr.exceptions.LockUnavailable: if the lock service
            cannot be reached.
        """

    def close(self):
        """Drop the connections to the lock service, if any."""
        if self.records is not None:
            self.records.close()
