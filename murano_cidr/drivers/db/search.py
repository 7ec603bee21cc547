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

"""Where the ``db`` driver looks for a free candidate: a bounded search.

Each driver keeps, per scope and IP version, a summary of which of its
pool's candidates the scope's rows block (:class:`Summaries`): read once,
in full, the first time the process allocates in the scope, then kept up
to date with what the process itself inserts and with what it learns when
a candidate turns out to be used. An allocation then draws a candidate
the summary and ``taken`` both leave free (:func:`pick`) and inserts it.
So the rows read per allocation do not depend on the pool's size, its
fill or its layout.

How the candidate is inserted depends on whether the summary is
*current*. Every transaction that may add a row to a scope (an
allocation, an import, ``release_scope``) first locks the scope's row,
which adds one to its ``generation``
(:func:`~murano_cidr.drivers.db.queries.lock_scope` returns the new
value); one that rolls back takes its addition with it. A summary is
*current* at a generation when it blocks every candidate the scope's rows
blocked once the transaction of that generation committed. Each
allocation transaction, once committed (never before), settles the
summary it used (:meth:`Summary.settle`), which holds what the
transaction inserted and the windows it read: a summary read in full in
that transaction is current at its generation; another is current at it
once it is current at the generation before, which only this process's
own transactions can bring (they may settle out of order). So when the
lock returns the summary's generation plus one, no row has been added to
the scope since, and a candidate the summary leaves free is free of every
row of the scope:

* *Current*: the row is inserted checking only the unique keys
  (:func:`~murano_cidr.drivers.db.queries.insert_unless_taken`): no
  other lookup. With a ``taken`` given as a list (not a callable), the
  candidate is drawn before the lock, and inserted only if the
  generation, read once the lock is held, is the one expected
  (:func:`~murano_cidr.drivers.db.queries.lock_and_insert`); on
  PostgreSQL the lock and the insert are then one statement.
* *Not current* (another engine added rows since, the summary is new, or a
  transaction of this process failed): the ``INSERT`` checks the
  candidate against the scope's rows
  (:func:`~murano_cidr.drivers.db.queries.insert_if_free`) and inserts
  nothing if any row of the scope overlaps it, whatever its size: the rows
  starting inside the candidate, and each possible first address of a
  CIDR containing its first address (that address with its last 1, 2, ...
  bits cleared: at most 32, or 128, equality lookups).

What holds does not depend on the summary being right:

* *No overlapping CIDR, whatever the engines' pool settings.* Either the
  generation proves that the summary covers every row of the scope, or the
  database checks the candidate against the rows. Both run under the
  scope's row lock, which every writer of the scope takes first, so no row
  of the scope can appear between that check and the insert; on Galera,
  two such transactions on different nodes conflict at commit. A row
  deleted without the lock (a released row freed by ``reconcile``, a
  prune) only makes a summary block a free candidate.
* *No free candidate missed.* A summary that is not current can be wrong
  two ways. Another engine inserted since (or an engine of another version
  or with another pool): the ``INSERT`` inserts nothing, the driver reads
  the :data:`WINDOW` candidates from the one it drew (index lookups),
  learns them and draws again. A row was deleted since (a release freed
  elsewhere): the summary blocks a free candidate. When the summary and
  ``taken`` leave no candidate, or after :data:`MAX_MISSES` refused
  inserts, the driver reads all the scope's rows again under the lock and
  draws from that exact picture, which misses nothing (and is current once
  the transaction commits).
* *PoolExhausted only when the pool is full.* It is raised only after
  that full read, under the lock, finds no candidate free of the rows and
  of ``taken`` (and the owner holds no CIDR).

A summary stays not current once another engine allocates in the scope
(or this process imports into it), until the process reads the scope in
full again; its allocations then cost what they cost before the
generation was used (the ``INSERT``'s lookups). A scope's row is never
deleted by the driver, and a new one starts at a random generation, so
that a row deleted by hand and created again does not go through its
old generations.

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

#: Generations a summary keeps that were committed by this process after
#: one it has not seen (another engine's): they settle it if that one
#: turns out to be this process's too.
MAX_PENDING = 16


class Summary(object):
    """The candidates of one pool that one scope's rows block.

    :param pool: the :class:`~murano_cidr.pool.Pool`.
    :param held: a :class:`~murano_cidr.taken.TakenSet` of the scope's
        rows (all of them, read under the scope's lock).
    :ivar generation: the scope's generation at which the summary blocks
        every candidate a row of the scope blocked, or None if unknown
        (see :meth:`settle`).
    """

    def __init__(self, pool, held):
        self.pool = pool
        self.blocked = freemap.BlockedRanges(
            pool.size, pool.free_map(held).blocked_ranges())
        self.generation = None
        # Generations committed by this process, ahead of ``generation``.
        self._pending = set()
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
        """Mark candidate ``index`` used (this process inserted it)."""
        with self.lock:
            self.blocked.add(index, index)

    def pick(self, taken_map, rng):
        """Draw a candidate both ``taken`` and the summary leave free.

        See :func:`pick`.
        """
        with self.lock:
            return pick(taken_map, self.blocked, rng)

    def draw(self, taken_map, rng):
        """Draw as :meth:`pick` does, if the summary is current somewhere.

        :returns: ``(index, generation)``, read together, or None if the
            summary's generation is unknown or no candidate is free.
        """
        with self.lock:
            if self.generation is None:
                return None
            index = pick(taken_map, self.blocked, rng)
            return None if index is None else (index, self.generation)

    def is_current(self, generation):
        """Whether the summary was current when ``generation`` began.

        :param generation: what :func:`~.queries.lock_scope` returned in
            this transaction.
        """
        with self.lock:
            return self.generation == generation - 1

    def settle(self, generation, complete=False):
        """Record that a transaction of ``generation`` has committed.

        Call it once the transaction that locked the scope at
        ``generation`` has committed, if the summary holds everything that
        transaction changed (what it inserted, the windows it read).

        :param complete: whether the summary was read in full in that
            transaction: it is then current at ``generation``, whatever it
            was before. Otherwise it becomes current at ``generation`` once
            it is current at the one before; transactions of this process
            may settle out of order, and wait (at most
            :data:`MAX_PENDING`) for the ones before them.
        """
        with self.lock:
            if complete:
                if self.generation is None or generation > self.generation:
                    self.generation = generation
            elif self.generation is not None and generation > self.generation:
                self._pending.add(generation)
            while (self.generation is not None
                   and self.generation + 1 in self._pending):
                self.generation += 1
            self._pending = {g for g in self._pending
                             if self.generation is None or g > self.generation}
            while len(self._pending) > MAX_PENDING:
                self._pending.remove(min(self._pending))


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

    def settle(self, scope, summary, generation, complete=False):
        """Settle ``summary`` (:meth:`Summary.settle`), and keep the best.

        Called once the transaction has committed, so that a summary read
        in full by a transaction that failed is never kept; the one kept
        is the most current of this one and the one kept before.
        """
        summary.settle(generation, complete)
        key = (scope, summary.pool.version)
        with self._lock:
            kept = self._items.get(key)
            if (kept is not None and kept is not summary
                    and kept.pool == summary.pool
                    and (kept.generation or 0) > (summary.generation or 0)):
                # A later transaction of this process settled first.
                return
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
