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

"""Reservation records: a reservation the lock service keeps, not a process.

A reservation is a *record* per block it holds, kept by the lock service
(a file beside the lock files, a Redis key, an etcd key, a znode) and bound
to no process or session: ``(owner, scope, CIDR, token, created,
expires)``, where ``expires`` is ``reservation_timeout`` after it was made.
A record outlives the process that wrote it, and its session. Where the
service expires keys itself (Redis, etcd), the record is gone at
``expires``, by the service's clock; elsewhere (files, ZooKeeper) it stays
until it is replaced or deleted, and is live until ``expires`` by the
engines' clocks.

Every change of a record is conditional (:class:`RecordStore`): written
only where no record is, or where the one read is still there; deleted
only if it still is this reservation's (the token). So ``confirm`` tells
whether the reservation was the owner's throughout, and any engine
process can delete the records of an owner, through its *owner index*
record (the names of its block records), which :func:`release` reads.
"""

import abc
import hashlib
import json
import time
import uuid

from oslo_log import log as logging

from murano_cidr.engine.drivers.lock import backend as backend_mod
from murano_cidr import exceptions

LOG = logging.getLogger(__name__)


def index_name(owner):
    """Return the name of the owner index record of ``owner``."""
    digest = hashlib.sha256(owner.encode("utf-8")).hexdigest()[:32]
    return "%s-owner-%s" % (backend_mod.PREFIX, digest)


class Record(object):
    """One reservation, as every block record and its owner index keep it.

    :ivar owner: the owner.
    :ivar scope: the scope, or None.
    :ivar cidr: the CIDR reserved.
    :ivar token: unique to this reservation.
    :ivar created: when it was made (seconds since the epoch, UTC).
    :ivar expires: when it is dropped (seconds since the epoch, UTC).
    """

    __slots__ = ("owner", "scope", "cidr", "token", "created", "expires")

    def __init__(self, owner, scope, cidr, token, created, expires):
        self.owner = owner
        self.scope = scope
        self.cidr = cidr
        self.token = token
        self.created = created
        self.expires = expires

    @classmethod
    def new(cls, owner, scope, cidr, hold, clock=None):
        """Return a new reservation of ``cidr``, held ``hold`` seconds."""
        now = (clock or time.time)()
        return cls(owner, scope, cidr, uuid.uuid4().hex, now, now + hold)

    def encode(self):
        """Return the record's bytes, as stored."""
        return json.dumps({name: getattr(self, name)
                           for name in self.__slots__},
                          sort_keys=True).encode("utf-8")

    @classmethod
    def decode(cls, data):
        """Return the record stored as ``data``, or None if unreadable.

        An unreadable record (not written by this version) counts as live
        for as long as its store keeps it: see :func:`claim`.
        """
        try:
            fields = json.loads(data)
            return cls(*(fields[name] for name in cls.__slots__))
        except (ValueError, TypeError, KeyError):
            return None

    def live(self, clock=None):
        """Tell whether the record still holds its blocks."""
        return self.expires > (clock or time.time)()


class RecordStore(object, metaclass=abc.ABCMeta):
    """Where a lock service keeps records; every change is conditional.

    Every method raises
    :class:`~murano_cidr.exceptions.LockUnavailable` when the service
    cannot be reached.
    """

    #: Whether the service drops a record at its ``expires`` itself.
    expires_itself = False

    @abc.abstractmethod
    def read(self, name):
        """Return ``(data, version)``; ``(None, None)`` if no record."""

    @abc.abstractmethod
    def create(self, name, data, version, hold):
        """Write ``data`` if the record is still at ``version``.

        :param version: what :meth:`read` returned; None: no record.
        :param hold: seconds the service keeps it, where it expires
            records itself.
        :returns: False if another record was written meanwhile.
        """

    @abc.abstractmethod
    def delete(self, name, data):
        """Delete the record if its bytes are still ``data``.

        :returns: False if it was not (gone, expired, replaced).
        """

    def close(self):
        """Drop the connection to the service, if any."""


#: What an unreadable record (not written by this release) counts as:
#: live, for as long as its store keeps it.
_UNKNOWN = Record("?", None, "?", "?", 0, float("inf"))


def _holder(store, name):
    """Return the record in the way at ``name``, read after a failed write."""
    data, _version = store.read(name)
    return (Record.decode(data) if data is not None else None) or _UNKNOWN


def claim(store, name, record, data):
    """Write ``record`` (bytes ``data``) unless a live record holds ``name``.

    The write is conditional, so of two engines that race for a block one
    alone writes its record.

    :returns: None if written; else the live :class:`Record` in the way
        (one of an unknown layout is owned by ``"?"``).
    """
    hold = record.expires - record.created
    if store.expires_itself:
        # NOTE: the service drops an expired record itself: a write where
        # none is says all, one round trip fewer than reading first.
        if store.create(name, data, None, hold):
            return None
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


class RecordReservation(backend_mod.Reservation):
    """The block records of one reservation, held in the lock service.

    :param store: the :class:`RecordStore`.
    :param names: the names of its block records.
    :param record: the :class:`Record` they hold.
    """

    def __init__(self, store, names, record):
        self.store = store
        self.names = list(names)
        self.record = record
        self.data = record.encode()

    def still_held(self):
        return all(self.store.read(name)[0] == self.data
                   for name in self.names)

    def release(self):
        try:
            self.release_checked()
        except exceptions.LockUnavailable as e:
            LOG.warning("Could not delete the reservation of %s for %s (it "
                        "expires at %s): %s", self.record.cidr,
                        self.record.owner, _utc(self.record.expires),
                        e.kwargs.get("reason", e))

    def release_checked(self):
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


def index_data(reservation):
    """Return the owner index record of ``reservation``, as bytes."""
    return json.dumps({"record": reservation.data.decode("utf-8"),
                       "names": reservation.names},
                      sort_keys=True).encode("utf-8")


def write_index(store, reservation):
    """Write the owner index of ``reservation`` unless the owner has one."""
    record = reservation.record
    hold = record.expires - record.created
    name = index_name(record.owner)
    data = index_data(reservation)
    if store.create(name, data, None, hold):
        return
    current, version = store.read(name)
    older = _indexed_record(current)
    if current is None or (not store.expires_itself
                           and (older is None or not older.live())):
        # An index that expired (files, ZooKeeper keep it) is replaced.
        if store.create(name, data, version, hold):
            return
    # NOTE: another process reserved for the same owner and has not
    # confirmed or released it yet: its index stays, and this
    # reservation, which release() cannot find, expires on its own.
    LOG.warning("Another engine process holds a reservation for %s; a "
                "release of %s will not free %s, which is held until it is "
                "confirmed or reservation_timeout has passed",
                record.owner, record.owner, record.cidr)


def from_index(store, owner):
    """Return ``(reservation, index bytes)`` from the owner's index.

    :returns: ``(None, None)`` if ``owner`` has no index record.
    """
    data, _version = store.read(index_name(owner))
    if data is None:
        return None, None
    try:
        index = json.loads(data)
        record_data = index["record"].encode("utf-8")
        names = [str(name) for name in index["names"]]
    except (ValueError, TypeError, KeyError, AttributeError):
        record_data = names = None
    record = _indexed_record(data)
    if record is None or names is None:
        LOG.warning("The owner index of %s is unreadable; its reservation "
                    "expires on its own", owner)
        return None, None
    reservation = RecordReservation(store, names, record)
    reservation.data = record_data
    return reservation, data


def _indexed_record(data):
    """Return the :class:`Record` an owner index holds, or None."""
    if data is None:
        return None
    try:
        return Record.decode(json.loads(data)["record"].encode("utf-8"))
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


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


def _utc(seconds):
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds))


def describe(records, own, hold, now=None):
    """Say who holds the reservations in the way, and when they drop.

    :param records: the live :class:`Record` met, one per reservation.
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
                 "at %s UTC" % (max(0, now - oldest), _utc(oldest),
                                _utc(min(r.expires for r in known))))
    return text + (
        ". A reservation drops when its engine confirms it, when any engine "
        "process releases its owner (a delete of the deployment, on any "
        "engine), or reservation_timeout = %d s after it was made, whether "
        "or not its engine lives; its CIDR is then handed out again only if "
        "the router shows no subnet overlapping it" % hold)
