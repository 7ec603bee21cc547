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

"""The ``db`` driver's hints: which candidate an allocation tries first.

A hint is what this process saw of a scope's rows: it chooses the
candidate to try, never decides that one is free (the database does, see
:mod:`murano_cidr.engine.drivers.db.allocating`).
"""

import collections
import threading

from murano_cidr.engine import freemap

#: Draws among the candidates ``taken`` leaves free before a walk.
DRAWS = 32
#: Scopes whose hints a driver keeps (the least recently used go).
MAX_SCOPES = 1024


def pick(taken_map, blocked, rng, draws=DRAWS):
    """Draw a candidate free in ``taken_map`` and not in ``blocked``.

    Uniform among them when one of ``draws`` draws among the candidates
    ``taken`` leaves free hits one; otherwise the first after the last
    draw, wrapping.

    :param taken_map: a :class:`~murano_cidr.engine.freemap.FreeMap`.
    :param blocked: a :class:`~murano_cidr.engine.freemap.BlockedRanges`.
    :param rng: a :class:`random.Random`.
    :returns: a candidate index, or None if none is free in both.
    """
    free = taken_map.free
    if not free:
        return None
    index = None
    for _ in range(draws):
        index = taken_map.nth_free(rng.randrange(free))
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
    """The candidates of one pool that one scope's rows were seen to block.

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
        """Draw a candidate both ``taken`` and the hint leave free; block it.

        (:meth:`learn` of a window that starts at it frees it again.)
        """
        with self.lock:
            index = pick(taken_map, self.blocked, rng)
            if index is not None:
                self.blocked.add(index, index)
            return index


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
            if hint is None or (hint.pool is not pool
                                and hint.pool != pool):
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
