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

"""What the ``lock`` driver needs from a lock service, and the names.

Two things are named here, so that every engine, whatever its backend
object, agrees on them:

* the *scope lock*, held only while one caller picks a CIDR for a scope,
  where the service queues its waiters (file locks, ZooKeeper): it saves
  engines from trying the same candidates at once. Where waiting for a lock
  means polling it (etcd3, Redis) it is not taken, because polling hands
  the lock back to whoever just released it (the others sleep between
  polls) and starves them;
* the *reservation record* of each (scope, block)
  (:mod:`~murano_cidr.engine.drivers.lock.reservations`), which holds the block
  from ``allocate`` until ``confirm``, ``release`` (in any process) or
  ``reservation_timeout``. A block is an aligned network of a fixed
  prefix length (``reservation_prefixlen``); a CIDR is reserved by a
  record on every block it overlaps, so two overlapping CIDRs of any
  sizes always need a block in common.
"""

import abc
import hashlib

import netaddr


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


def record_name(scope, cidr):
    """Return the name of the record that reserves block ``cidr`` in ``scope``.

    :param scope: a scope, or None.
    :param cidr: a block's CIDR string, e.g. ``"10.0.3.0/24"``.
    :returns: a string usable as a file name, a key and a znode's name.
    """
    return "%s-%s-%s-reservation" % (PREFIX, _scope_digest(scope),
                                     cidr.replace("/", "_").replace(":", "."))


class Reservation(object, metaclass=abc.ABCMeta):
    """A reservation this process made."""

    @abc.abstractmethod
    def still_held(self):
        """Tell whether the reservation is still ours.

        :returns: False if it expired or was taken over.
        :raises murano_cidr.exceptions.LockUnavailable: if the lock service
            cannot be asked.
        """

    @abc.abstractmethod
    def release(self):
        """Release it; never raises (a lost reservation is already free)."""

    @abc.abstractmethod
    def release_checked(self):
        """Release it and tell whether it was ours until then.

        :returns: False if it expired or was taken over before.
        :raises murano_cidr.exceptions.LockUnavailable: if the lock service
            cannot be asked; the reservation then expires.
        """


#: The most blocks one reservation may hold.
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


class LockBackend(object, metaclass=abc.ABCMeta):
    """A lock service, as the ``lock`` driver uses it.

    :ivar description: what to name in messages (never a password).
    :ivar records: the
        :class:`~murano_cidr.engine.drivers.lock.reservations.RecordStore` that
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

    def close(self):
        """Drop the connections to the lock service, if any."""
        if self.records is not None:
            self.records.close()
