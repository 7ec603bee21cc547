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

"""One pick of the ``lock`` driver, read top to bottom, and its records.

:func:`reserve` is ``allocate`` once the driver checked its arguments:
under the scope lock, :func:`pick` chooses a free candidate at random and
writes a :class:`Record` on every block it overlaps (:func:`claim`, each
write conditional), then the owner's index record. Records are the lock
service's, not a process's: any engine releases an owner through its index
(:func:`release`). Why: :doc:`/reference/lock-driver`.
"""

import collections
import hashlib
import json
import secrets
import time
import uuid

from oslo_log import log as logging

from murano_cidr.engine.drivers.lock import backend as backend_mod
from murano_cidr.engine import taken as taken_mod
from murano_cidr import exceptions

LOG = logging.getLogger(__name__)

# NOTE: the system's randomness: forked engines never share a seed.
_RANDOM = secrets.SystemRandom()

#: Prefix of every lock and record name.
PREFIX = "murano-cidr"


def reserve(backend, prefixlen, pool, owner, scope, taken, hold, exhausted):
    """Reserve a CIDR of ``pool`` for ``owner`` under the scope lock.

    ``taken`` is read (and checked) before the lock is taken, or under it
    if it is a callable. The owner index is written once the blocks are.

    :param hold: ``reservation_timeout``, in seconds.
    :returns: ``(cidr, reservation)``.
    :raises: what :func:`pick` raises; nothing is held then.
    """
    read_taken = TakenReader(taken, pool.version)
    store = backend.records

    def new_record(cidr):
        return Record.new(owner, scope, cidr, hold)

    with backend.scope_lock(scope_lock_name(scope)):
        cidr, reservation = pick(store, prefixlen, scope, pool, read_taken,
                                 new_record, exhausted)
    try:
        write_index(store, reservation)
    except BaseException:
        reservation.release()
        raise
    return cidr, reservation


def pick(store, prefixlen, scope, pool, read_taken, new_record, exhausted):
    """Reserve a free candidate at random; call with the scope lock held.

    A candidate with a block another engine holds is skipped; one whose
    subnet appeared meanwhile (``taken`` read again) is given up. Once all
    were, one more pass reads ``taken`` again: the pool is exhausted at one
    moment, not over the whole call.

    :param new_record: ``new_record(cidr)`` returns the :class:`Record`.
    :param exhausted: ``exhausted(pool, scope, free_map, allocated_map,
        holders)`` returns the error to raise when nothing is free.
    :returns: ``(cidr, reservation)``.
    :raises murano_cidr.exceptions.PoolExhausted: if nothing is free.
    :raises murano_cidr.exceptions.LockUnavailable: if the lock service
        cannot be reached; nothing is kept.
    """
    version = pool.version
    taken_set = read_taken()
    # Given up in this pass: held by another engine (counted as
    # allocated), or appeared after we reserved it (counted as taken).
    elsewhere, appeared, holders = [], [], {}
    second_look = True
    while True:
        blocked = (taken_set.union(taken_mod.TakenSet(version,
                                                      elsewhere + appeared))
                   if elsewhere or appeared else taken_set)
        free_map = pool.free_map(blocked)
        free = free_map.free
        if free == 0 and second_look and (elsewhere or appeared):
            # NOTE: what this pass gave up may be free by now: look once
            # more, with taken read again.
            second_look = False
            elsewhere, appeared, holders = [], [], {}
            taken_set = read_taken()
            continue
        if free == 0:
            held = taken_mod.TakenSet(version, elsewhere)
            raise exhausted(pool, scope, free_map,
                            allocated_map=pool.free_map(held),
                            holders=list(holders.values()))
        net = pool[free_map.nth_free(_RANDOM.randrange(free))]
        cidr = str(net)
        reservation, busy, holder = try_reserve(
            store, prefixlen, scope, net, new_record(cidr))
        if reservation is None:
            elsewhere.append((busy.first, busy.last))
            holders[holder.token] = holder
            continue
        try:
            if read_taken.again:
                taken_set = read_taken()
                if taken_set.overlaps(net.first, net.last):
                    LOG.debug("%s appeared in scope %s while it was "
                              "being reserved; trying another", cidr,
                              scope)
                    appeared.append((net.first, net.last))
                    reservation.release()
                    continue
        except BaseException:
            reservation.release()
            raise
        return cidr, reservation


def try_reserve(store, prefixlen, scope, net, record):
    """Write ``record`` for every block ``net`` overlaps, without waiting.

    :returns: ``(reservation, None, None)``, or ``(None, block, holder)``
        with a block another engine holds and its :class:`Record`.
    :raises murano_cidr.exceptions.LockUnavailable: nothing is kept.
    """
    data = record.encode()
    names = []
    try:
        for block in backend_mod.blocks(net, prefixlen):
            name = record_name(scope, str(block))
            holder = claim(store, name, record, data)
            if holder is not None:
                RecordReservation(store, names, record).release()
                return None, block, holder
            names.append(name)
    except BaseException:
        RecordReservation(store, names, record).release()
        raise
    return RecordReservation(store, names, record), None, None


def claim(store, name, record, data):
    """Write ``record`` (bytes ``data``) unless a live record holds ``name``.

    :returns: None if written; else the live :class:`Record` in the way
        (one of an unknown layout is owned by ``"?"``).
    """
    hold = record.expires - record.created
    if store.create(name, data, None, hold):
        return None
    if store.expires_itself:
        return _holder(store, name)
    current, version = store.read(name)
    if current is not None:
        other = Record.decode(current)
        if other is None or other.live():
            return other or _UNKNOWN
        LOG.info("The reservation of %s for %s (scope %s) expired; its "
                 "block is reused", other.cidr, other.owner, other.scope)
    if store.create(name, data, version, hold):
        return None
    return _holder(store, name)


def _holder(store, name):
    data, _version = store.read(name)
    return (Record.decode(data) if data is not None else None) or _UNKNOWN


class Record(collections.namedtuple(
        "Record", "owner scope cidr token created expires")):
    """One reservation, as every block record and its owner index keep it.

    Stored as JSON; ``created`` and ``expires`` are seconds since the
    epoch, ``token`` is unique to the reservation.
    """

    __slots__ = ()

    @classmethod
    def new(cls, owner, scope, cidr, hold, clock=None):
        """Return a new reservation of ``cidr``, held ``hold`` seconds."""
        now = (clock or time.time)()
        return cls(owner, scope, cidr, uuid.uuid4().hex, now, now + hold)

    def encode(self):
        """Return the record's bytes, as stored."""
        return json.dumps(self._asdict(), sort_keys=True).encode("utf-8")

    @classmethod
    def decode(cls, data):
        """Return the record stored as ``data``, or None if unreadable."""
        try:
            fields = json.loads(data)
            return cls(*(fields[name] for name in cls._fields))
        except (ValueError, TypeError, KeyError):
            return None

    def live(self, clock=None):
        """Tell whether the record still holds its blocks."""
        return self.expires > (clock or time.time)()


#: An unreadable record (another release's) is live while it is kept.
_UNKNOWN = Record("?", None, "?", "?", 0, float("inf"))


class RecordReservation(object):
    """The block records of one reservation, held in the lock service."""

    def __init__(self, store, names, record):
        self.store = store
        self.names = list(names)
        self.record = record
        self.data = record.encode()

    def release(self):
        """Release it; never raises (a lost reservation is already free)."""
        try:
            self.release_checked()
        except exceptions.LockUnavailable as e:
            LOG.warning("Could not delete the reservation of %s for %s (it "
                        "expires at %s): %s", self.record.cidr,
                        self.record.owner, utc(self.record.expires),
                        e.kwargs.get("reason", e))

    def release_checked(self):
        """Release it; return False if it was lost before.

        :raises murano_cidr.exceptions.LockUnavailable: if the service
            cannot be asked; the reservation then expires.
        """
        held = True
        error = None
        for name in self.names:
            try:
                held = self.store.delete(name, self.data) and held
            except exceptions.LockUnavailable as e:
                error = error or e
        if error is not None:
            raise error
        return held


class TakenReader(object):
    """Read ``taken`` now if a collection, at each call if a callable."""

    def __init__(self, taken, version):
        self.version = version
        self.again = callable(taken)
        self._taken = taken
        self._set = (None if self.again
                     else taken_mod.TakenSet.from_taken(taken, version))

    def __call__(self):
        if self.again:
            return taken_mod.TakenSet.from_taken(self._taken, self.version)
        return self._set


def _scope_digest(scope):
    # NOTE: safe as a file name and a key; None is not the scope "None".
    key = "n:" if scope is None else "s:" + scope
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def scope_lock_name(scope):
    """Return the name of the lock that serialises picks in ``scope``."""
    return "%s-scope-%s" % (PREFIX, _scope_digest(scope))


def record_name(scope, cidr):
    """Return the name of the record of block ``cidr`` (a string)."""
    return "%s-%s-%s-reservation" % (PREFIX, _scope_digest(scope),
                                     cidr.replace("/", "_").replace(":", "."))


def index_name(owner):
    """Return the name of the owner index record of ``owner``."""
    digest = hashlib.sha256(owner.encode("utf-8")).hexdigest()[:32]
    return "%s-owner-%s" % (PREFIX, digest)


def index_data(reservation):
    """Return the owner index record of ``reservation``, as bytes."""
    return json.dumps({"record": reservation.data.decode("utf-8"),
                       "names": reservation.names},
                      sort_keys=True).encode("utf-8")


def indexed_record(data):
    """Return the :class:`Record` an owner index holds, or None."""
    if data is None:
        return None
    try:
        return Record.decode(json.loads(data)["record"].encode("utf-8"))
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def write_index(store, reservation):
    """Write the owner index of ``reservation`` unless the owner has one."""
    record = reservation.record
    hold = record.expires - record.created
    name = index_name(record.owner)
    data = index_data(reservation)
    if store.create(name, data, None, hold):
        return
    current, version = store.read(name)
    older = indexed_record(current)
    if current is None or (not store.expires_itself
                           and (older is None or not older.live())):
        # An index that expired (files, ZooKeeper keep it) is replaced.
        if store.create(name, data, version, hold):
            return
    # NOTE: another process's index stays; this reservation expires.
    LOG.warning("Another engine process holds a reservation for %s; a "
                "release of %s will not free %s, which is held until it is "
                "confirmed or reservation_timeout has passed",
                record.owner, record.owner, record.cidr)


def from_index(store, owner):
    """Return ``(reservation, index bytes)`` from the owner's index.

    :returns: ``(None, None)`` if ``owner`` has no readable index record.
    """
    data, _version = store.read(index_name(owner))
    if data is None:
        return None, None
    try:
        index = json.loads(data)
        record_data = index["record"].encode("utf-8")
        names = [str(name) for name in index["names"]]
        record = Record.decode(record_data)
    except (ValueError, TypeError, KeyError, AttributeError):
        record = None
    if record is None:
        LOG.warning("The owner index of %s is unreadable; its reservation "
                    "expires on its own", owner)
        return None, None
    reservation = RecordReservation(store, names, record)
    reservation.data = record_data
    return reservation, data


def release(store, owner):
    """Delete the reservation of ``owner``, whichever process made it.

    :returns: True if a block record of it was deleted.
    :raises murano_cidr.exceptions.LockUnavailable: if the service cannot
        be reached.
    """
    reservation, data = from_index(store, owner)
    if reservation is None:
        return False
    dropped = reservation.release_checked()
    store.delete(index_name(owner), data)
    return dropped


def drop_index(store, reservation):
    """Delete the owner index of ``reservation``, if it is still its own."""
    store.delete(index_name(reservation.record.owner),
                 index_data(reservation))


def utc(seconds):
    """Return a time in seconds since the epoch as UTC text."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds))
