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

"""One allocation of the ``db`` driver, top to bottom, in one transaction.

:func:`allocate` locks the scope, reads ``taken``, chooses a candidate,
inserts it checked by the database and, when that inserted nothing, frees
what is freeable and tries again (the steps:
``doc/source/contributor/drivers.rst``); the SQL is in
:mod:`murano_cidr.engine.drivers.db.statements`.
"""

import collections
import contextlib
import secrets
import threading

from oslo_db import exception as db_exc

from murano_cidr.engine.drivers.db import statements
from murano_cidr.engine import freemap
from murano_cidr.engine import taken as taken_mod
from murano_cidr import exceptions
from murano_cidr import messages

#: Candidates read around a drawn candidate that turned out to be used.
WINDOW = 16

#: Draws among the candidates ``taken`` leaves free before the search
#: walks from the last one.
DRAWS = 32

#: Used candidates drawn in a row after which the scope is read in full.
MAX_MISSES = 3

#: Scopes whose hints a driver keeps (the least recently used go).
MAX_SCOPES = 1024

# NOTE: the operating system's randomness, so forked engines never share a
# seed and never start their searches at the same place.
_RANDOM = secrets.SystemRandom()


def allocate(conn, hints, owner, scope, pool, taken, taken_set, ages):
    """Allocate a CIDR in one transaction (the steps numbered in the docs).

    :param hints: the driver's :class:`Hints`.
    :param taken: what the caller gave: a callable is read under the lock.
    :param taken_set: ``taken`` read already (a collection), or None.
    :param ages: ``(release_grace, reservation_timeout)`` in seconds.
    :returns: ``(cidr, new, taken_set)``: the CIDR inserted (``new``), or
        the one the owner holds, or None if no candidate is free; and
        ``taken`` as read.
    :raises murano_cidr.exceptions.OwnerConflict: if the owner holds a
        CIDR of another scope or IP version.
    :raises murano_cidr.exceptions.InvalidArgument: if the database cannot
        store the owner or scope.
    """
    if scope is not None:
        statements.lock_scope(conn, scope)                      # 1.
    if taken_set is None:
        taken_set = taken_mod.TakenSet.from_taken(taken, pool.version)  # 2.
    taken_map = pool.free_map(taken_set)
    if scope is None:
        index = None
        if taken_map.free:
            index = taken_map.nth_free(_RANDOM.randrange(taken_map.free))
        cidr = _insert(conn, owner, None, pool, index)
    else:
        cidr = _search(conn, hints, owner, scope, pool, taken_set,
                       taken_map, ages)
    if cidr is not None:
        return cidr, True, taken_set
    row = statements.get(conn, owner)
    if row is None:
        return None, False, taken_set
    if row.scope != scope or row.ip_version != pool.version:
        raise exceptions.OwnerConflict(
            owner=owner, cidr=row.cidr,
            scope=row.scope if row.scope is not None else "(none)")
    return row.cidr, False, taken_set


def _search(conn, hints, owner, scope, pool, taken_set, taken_map, ages):
    """Steps 3 to 5 in a named scope: the CIDR inserted, or None."""
    hint = hints.get(scope, pool)
    complete = hint is None
    if complete:
        hint = read_scope(conn, hints, pool, scope, taken_set, ages)
    misses = 0
    while True:
        index = hint.pick(taken_map, _RANDOM)                   # 3.
        if index is None:
            if complete or not taken_map.free:
                return None
            hint = read_scope(conn, hints, pool, scope, taken_set, ages)
            complete = True
            continue
        cidr = _insert(conn, owner, scope, pool, index)         # 4.
        if cidr is not None:
            hint.block(index)
            return cidr
        lo, hi = window(pool, index)                            # 5.
        rows, held = statements.read_window(
            conn, scope, pool.version, pool.first_address(lo),
            pool[hi].last, owner=owner, grace=ages[0], timeout=ages[1])
        if held:
            return None
        if not _learn(conn, hint, lo, hi, rows, taken_set, ages):
            # Whatever the rows said, this candidate is not drawn again.
            hint.block(index)
        misses += 1
        if misses >= MAX_MISSES and not complete:
            hint = read_scope(conn, hints, pool, scope, taken_set, ages)
            complete = True


@contextlib.contextmanager
def _storable(owner, scope):
    """Turn the database's refusal of a value into InvalidArgument."""
    try:
        yield
    except (db_exc.DBDataError, db_exc.DBInvalidUnicodeParameter) as e:
        raise exceptions.InvalidArgument(
            name="owner or scope", value=owner if scope is None else
            "%s (scope %s)" % (owner, scope),
            reason="the database cannot store it (%s)"
            % messages.one_line(e))


def _insert(conn, owner, scope, pool, index):
    """Insert candidate ``index`` unless the database finds it used."""
    if index is None:
        return None
    network = pool[index]
    with _storable(owner, scope):
        inserted = statements.insert_if_free(conn, statements.row_values(
            owner, scope, pool.version, network, False))
    return str(network) if inserted else None


def _learn(conn, hint, lo, hi, rows, taken_set, ages):
    """Free what may go of ``rows``, and teach the hint the rest.

    :returns: how many rows were freed.
    """
    freeable = {row.id for row in rows if row.reclaimable and not
                taken_set.overlaps(int(row.range_first, 16),
                                   int(row.range_last, 16))}
    freed = statements.reclaim(conn, freeable, *ages) if freeable else 0
    hint.learn(lo, hi, _held(hint.pool, [r for r in rows
                                         if r.id not in freeable]))
    return freed


def _held(pool, rows):
    return taken_mod.TakenSet(pool.version, [
        (int(r.range_first, 16), int(r.range_last, 16)) for r in rows])


def read_scope(conn, hints, pool, scope, taken_set, ages):
    """Read the scope's rows in the pool, freeing what may go; keep a hint.

    Call it holding the scope's lock, ``taken`` read after it.

    :returns: the new :class:`Hint`.
    """
    hint = Hint(pool, taken_mod.TakenSet(pool.version))
    for network, lo, hi in _networks(pool):
        rows = statements.read_window(
            conn, scope, pool.version, network.first, network.last,
            grace=ages[0], timeout=ages[1])[0]
        _learn(conn, hint, lo, hi, rows, taken_set, ages)
    hints.keep(scope, hint)
    return hint


def _networks(pool):
    """Each network of the pool, with its first and last candidate."""
    lo = 0
    for network in pool.networks:
        hi = lo + 2 ** (pool.prefixlen - network.prefixlen) - 1
        yield network, lo, hi
        lo = hi + 1


def window(pool, index):
    """The candidates read around ``index``, within its pool network."""
    for _network, _lo, hi in _networks(pool):
        if index <= hi:
            return index, min(index + WINDOW - 1, hi)


def pick(taken_map, blocked, rng, draws=DRAWS):
    """Draw a candidate free in ``taken_map`` and not in ``blocked``.

    Uniform among those candidates when one of ``draws`` uniform draws
    among the candidates ``taken`` leaves free hits one (the common case);
    otherwise the first such candidate after the last draw, wrapping.

    :param taken_map: a :class:`~murano_cidr.engine.freemap.FreeMap` of
        ``taken``.
    :param blocked: a :class:`~murano_cidr.engine.freemap.BlockedRanges`.
    :param rng: a :class:`random.Random`.
    :returns: a candidate index, or None if no candidate is free in both.
    """
    if not taken_map.free:
        return None
    index = None
    for _ in range(draws):
        index = taken_map.nth_free(rng.randrange(taken_map.free))
        if not blocked.is_blocked(index):
            return index
    found = _first_free(taken_map, blocked, index, taken_map.size - 1)
    if found is None and index:
        found = _first_free(taken_map, blocked, 0, index - 1)
    return found


def _first_free(taken_map, blocked, lo, hi):
    """The first index in ``[lo, hi]`` free in both maps, or None."""
    index = lo
    while index is not None and index <= hi:
        index = blocked.next_unblocked(index)
        if index is None or index > hi:
            return None
        if taken_map.is_free(index):
            return index
        nxt = taken_map.next_free(index)
        if nxt is None or nxt < index:
            return None
        index = nxt
    return None


class Hint(object):
    """The candidates of one pool one scope's rows were seen to block.

    :param pool: the :class:`~murano_cidr.engine.pool.Pool`.
    :param held: a :class:`~murano_cidr.engine.taken.TakenSet` of the rows.
    """

    def __init__(self, pool, held):
        self.pool = pool
        self.blocked = freemap.BlockedRanges(
            pool.size, pool.free_map(held).blocked_ranges())
        self.lock = threading.Lock()

    def learn(self, lo, hi, held):
        """Replace what is known of candidates ``lo`` to ``hi``."""
        with self.lock:
            self.blocked.discard(lo, hi)
            for first, last in self.pool.free_map(held).blocked_ranges():
                self.blocked.add(first, last)

    def block(self, index):
        """Mark candidate ``index`` used."""
        with self.lock:
            self.blocked.add(index, index)

    def pick(self, taken_map, rng):
        """Draw a candidate both ``taken`` and the hint leave free."""
        with self.lock:
            return pick(taken_map, self.blocked, rng)


class Hints(object):
    """A driver's hints, by scope and IP version (bounded, LRU)."""

    def __init__(self, max_scopes=MAX_SCOPES):
        self.max_scopes = max_scopes
        self._items = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, scope, pool):
        """Return the hint of ``scope`` for ``pool``, or None."""
        key = (scope, pool.version)
        with self._lock:
            hint = self._items.get(key)
            if hint is None or hint.pool != pool:
                return None
            self._items.move_to_end(key)
            return hint

    def keep(self, scope, hint):
        """Keep ``hint`` for ``scope`` and its pool's IP version."""
        key = (scope, hint.pool.version)
        with self._lock:
            self._items[key] = hint
            self._items.move_to_end(key)
            while len(self._items) > self.max_scopes:
                self._items.popitem(last=False)

    def forget(self, scope=None):
        """Drop the hints of ``scope``, or all with None."""
        with self._lock:
            for key in list(self._items):
                if scope is None or key[0] == scope:
                    del self._items[key]
