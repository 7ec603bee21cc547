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

"""How the ``lock`` driver picks a CIDR and writes its reservation records.

The driver holds the scope's lock around :func:`pick`; everything here
only talks to the lock backend it is given.
"""

import secrets

from oslo_log import log as logging

from murano_cidr.engine.drivers.lock import backend as backend_mod
from murano_cidr.engine.drivers.lock import reservations
from murano_cidr.engine import taken as taken_mod

LOG = logging.getLogger(__name__)

# NOTE: the operating system's randomness, so forked engines never share a
# seed and never try the same candidates in the same order.
_RANDOM = secrets.SystemRandom()


def try_reserve(backend, prefixlen, scope, net, record):
    """Write ``record`` for every block ``net`` overlaps, without waiting.

    Every write is conditional (:func:`~.reservations.claim`): two engines
    that race for a block cannot both write its record, so no lock is
    taken around it.

    :param backend: the
        :class:`~murano_cidr.engine.drivers.lock.backend.LockBackend`.
    :param prefixlen: the prefix length of the blocks.
    :param scope: the scope, or None.
    :param net: the candidate, a :class:`netaddr.IPNetwork`.
    :param record: the :class:`~.reservations.Record` to write.
    :returns: ``(reservation, None, None)``, or ``(None, block, holder)``
        with the block another engine holds and the live
        :class:`~.reservations.Record` that holds it; nothing is kept
        then.
    :raises murano_cidr.exceptions.LockUnavailable: if the lock service
        cannot be reached; nothing is kept.
    """
    data = record.encode()
    names = []
    try:
        for block in backend_mod.blocks(net, prefixlen):
            name = backend_mod.record_name(scope, str(block))
            holder = reservations.claim(backend.records, name, record, data)
            if holder is not None:
                reservations.RecordReservation(backend.records, names,
                                               record).release()
                return None, block, holder
            names.append(name)
    except BaseException:
        reservations.RecordReservation(backend.records, names,
                                       record).release()
        raise
    return (reservations.RecordReservation(backend.records, names, record),
            None, None)


def pick(backend, prefixlen, scope, pool, read_taken, new_record,
         exhausted):
    """Reserve a free candidate; call with the scope lock held.

    Candidates are tried in random order among the free ones; one any of
    whose blocks holds another engine's live record is skipped, and one
    whose subnet appeared while it was being reserved (a callable
    ``taken``, read again) is given up. When every candidate was skipped
    or given up, one more pass starts afresh (``taken`` read again), so
    that the pool is exhausted against what was in use at one moment, not
    against everything seen during the call.

    :param backend: the
        :class:`~murano_cidr.engine.drivers.lock.backend.LockBackend`.
    :param prefixlen: the prefix length of the reservation blocks.
    :param scope: the scope, or None.
    :param pool: the :class:`~murano_cidr.engine.pool.Pool`.
    :param read_taken: a :class:`TakenReader`.
    :param new_record: ``new_record(cidr)`` returns the
        :class:`~.reservations.Record` to write for a candidate.
    :param exhausted: ``exhausted(pool, scope, free_map, allocated_map,
        holders)``, returning the error to raise when nothing is free;
        ``holders`` are the live records met.
    :returns: ``(cidr, reservation)``.
    :raises murano_cidr.exceptions.PoolExhausted: if nothing is free.
    :raises murano_cidr.exceptions.LockUnavailable: if the lock service
        cannot be reached; nothing is kept.
    """
    version = pool.version
    taken_set = read_taken()
    # Candidates given up during this call: reserved by another engine
    # (they count as allocated), or whose subnet appeared after we
    # reserved them (they count as taken). Each candidate is tried at
    # most once a pass, and there are two passes at most, so the loop
    # ends.
    elsewhere = []
    appeared = []
    holders = {}
    second_look = True
    while True:
        held = taken_mod.TakenSet(version, elsewhere)
        blocked = taken_set.union(held).union(
            taken_mod.TakenSet(version, appeared))
        free_map = pool.free_map(blocked)
        if free_map.free == 0 and second_look and (elsewhere or appeared):
            # NOTE: what this pass gave up may be free by now (the engine
            # that held a block confirmed it, and its older subnet left
            # the router): the pool is exhausted only if it is at one
            # moment, so look once more with taken read again.
            second_look = False
            elsewhere, appeared, holders = [], [], {}
            taken_set = read_taken()
            continue
        if free_map.free == 0:
            raise exhausted(pool, scope, free_map,
                            allocated_map=pool.free_map(held),
                            holders=list(holders.values()))
        index = free_map.nth_free(_RANDOM.randrange(free_map.free))
        cidr = pool.cidr(index)
        net = pool[index]
        reservation, busy, holder = try_reserve(
            backend, prefixlen, scope, net, new_record(cidr))
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


class TakenReader(object):
    """Read ``taken`` once if it is a collection, at each call if a callable.

    A collection (perhaps a generator, which cannot be read twice) is read
    and validated when the reader is built, before any lock is taken.
    """

    def __init__(self, taken, version):
        self.version = version
        self.again = callable(taken)
        if self.again:
            self._taken = taken
            self._set = None
        else:
            self._set = taken_mod.TakenSet.from_taken(taken, version)

    def __call__(self):
        if self.again:
            return taken_mod.TakenSet.from_taken(self._taken, self.version)
        return self._set
