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

"""Which candidate the ``db`` driver tries: a hint, never a decision.

Each driver keeps, per scope and IP version, a summary of which of its
pool's candidates the scope's rows were seen to block (:class:`Summaries`):
read once, in full, the first time the process allocates in the scope,
then kept up to date with what the process itself inserts and with what
it learns when a candidate turns out to be used. An allocation draws a
candidate the summary and ``taken`` both leave free (:func:`pick`), so the
rows read per allocation do not depend on the pool's size or fill.

The summary only chooses which candidate to try. Whether it is free is
decided by the database, every time: the ``INSERT`` checks the candidate
against every live and held row of the scope
(:func:`~murano_cidr.drivers.db.queries.insert_if_free`), under the
scope's row lock, and inserts nothing if any overlaps it, whatever its
size or whoever wrote it. A summary that is wrong costs time, never a
CIDR:

* A row it does not know of (another engine's, one written by hand):
  the ``INSERT`` inserts nothing; the driver reads the :data:`WINDOW`
  candidates from the one it drew (index lookups), learns them and draws
  again.
* A row deleted since (a release freed elsewhere): the summary blocks a
  free candidate. When the summary and ``taken`` leave no candidate, or
  after :data:`MAX_MISSES` refused inserts, the driver reads all the
  scope's rows again under the lock and draws from that exact picture.
  ``PoolExhausted`` is raised only after such a read finds nothing free.

Released rows stay in the table until they are freed
(:mod:`murano_cidr.drivers.db.releasing`), so they block their range like
any other row.
"""

import collections
import threading

from murano_cidr import freemap

#: Candidates read around a drawn candidate that turned out to be used.
WINDOW = 16

#: Draws among the candidates ``taken`` leaves free before the search
#: walks from the last one: at 90 % fill, 32 draws all miss 3 % of the
#: time.
DRAWS = 32

#: Used candidates drawn in a row after which the scope is read again.
MAX_MISSES = 3

#: Scopes whose summaries a driver keeps (the least recently used go).
MAX_SCOPES = 1024


class Summary(object):
    """What one scope's rows were seen to block of one pool: a hint.

    :param pool: the :class:`~murano_cidr.pool.Pool`.
    :param held: a :class:`~murano_cidr.taken.TakenSet` of the scope's
        rows.
    """

    def __init__(self, pool, held):
        self.pool = pool
        self.blocked = freemap.BlockedRanges(
            pool.size, pool.free_map(held).blocked_ranges())
        self.lock = threading.Lock()

    def learn(self, lo, hi, held):
        """Replace what is known of candidates ``lo`` to ``hi``.

        :param held: a :class:`~murano_cidr.taken.TakenSet` of every row
            overlapping those candidates.
        """
        with self.lock:
            self.blocked.discard(lo, hi)
            for first, last in self.pool.free_map(held).blocked_ranges():
                self.blocked.add(first, last)

    def block(self, index):
        """Mark candidate ``index`` used."""
        with self.lock:
            self.blocked.add(index, index)

    def pick(self, taken_map, rng):
        """Draw a candidate both ``taken`` and the summary leave free.

        See :func:`pick`.
        """
        with self.lock:
            return pick(taken_map, self.blocked, rng)


def _first_free(taken_map, blocked, lo, hi):
    """Return the first index in ``[lo, hi]`` free in both maps, or None.

    Each step jumps over a whole blocked range of one of the two maps.
    """
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


def pick(taken_map, blocked, rng, draws=DRAWS):
    """Draw a candidate free in ``taken_map`` and not in ``blocked``.

    Uniform among those candidates when one of ``draws`` uniform draws
    among the candidates ``taken`` leaves free hits one (the common case);
    otherwise the first such candidate after the last draw, wrapping.

    :param taken_map: a :class:`~murano_cidr.freemap.FreeMap` of ``taken``.
    :param blocked: a :class:`~murano_cidr.freemap.BlockedRanges`.
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


def window(pool, index):
    """Return the candidates read around ``index``: ``(lo, hi)``.

    :data:`WINDOW` candidates from ``index`` on, within its pool network.
    """
    end = -1
    for network in pool.networks:
        end += 2 ** (pool.prefixlen - network.prefixlen)
        if index <= end:
            break
    return index, min(index + WINDOW - 1, end)


class Summaries(object):
    """A driver's summaries, by scope and IP version (bounded, LRU)."""

    def __init__(self, max_scopes=MAX_SCOPES):
        self.max_scopes = max_scopes
        self._items = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, scope, pool):
        """Return the summary of ``scope`` for ``pool``, or None."""
        key = (scope, pool.version)
        with self._lock:
            summary = self._items.get(key)
            if summary is None or summary.pool != pool:
                return None
            self._items.move_to_end(key)
            return summary

    def keep(self, scope, summary):
        """Keep ``summary`` as the hint for ``scope`` and its pool."""
        key = (scope, summary.pool.version)
        with self._lock:
            self._items[key] = summary
            self._items.move_to_end(key)
            while len(self._items) > self.max_scopes:
                self._items.popitem(last=False)

    def forget(self, scope=None):
        """Drop the summaries of ``scope``, or all with None."""
        with self._lock:
            for key in list(self._items):
                if scope is None or key[0] == scope:
                    del self._items[key]
