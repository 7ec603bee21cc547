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

"""Placing a new allocation: draw a candidate, insert it, learn from misses.

The statements of the ``db`` driver's allocation transaction once the
scope's row is locked and ``taken`` read (see
:mod:`murano_cidr.drivers.db.driver`): a candidate is drawn among those
``taken`` and the scope's summary (:mod:`murano_cidr.drivers.db.search`)
leave free and inserted unless the database forbids it; a miss reads the
rows around the candidate into the summary. A full read of the scope's
rows frees the released rows that may be
(:mod:`murano_cidr.drivers.db.releasing`).
"""

import contextlib
import secrets

from oslo_db import exception as db_exc
from oslo_log import log as logging

from murano_cidr.drivers.db import queries
from murano_cidr.drivers.db import releasing
from murano_cidr.drivers.db import search
from murano_cidr import exceptions
from murano_cidr import messages
from murano_cidr import taken as taken_mod

LOG = logging.getLogger(__name__)

# NOTE: the operating system's randomness, so forked engines never share a
# seed and never start their searches at the same place.
_RANDOM = secrets.SystemRandom()


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


def _new_row(owner, scope, pool, network):
    """The column values of a new, unconfirmed allocation of ``network``."""
    return queries.row_values(owner, scope, pool.version, network, False,
                              queries.utcnow())


def insert_unscoped(conn, owner, pool, taken_map):
    """Insert a free candidate of no scope, drawn at random.

    :returns: the CIDR inserted, or None if the owner holds a CIDR or
        no candidate is free.
    """
    index = None
    if taken_map.free:
        index = taken_map.nth_free(_RANDOM.randrange(taken_map.free))
    return _insert(conn, owner, None, pool, index)


def _insert(conn, owner, scope, pool, index, current=False):
    """Insert candidate ``index`` unless forbidden; its CIDR or None.

    :param current: whether the scope's summary is current (see
        :mod:`.search`): the candidate is then free of the scope's rows,
        and only the unique keys are checked.
    """
    if index is None:
        return None
    network = pool[index]
    insert = (queries.insert_unless_taken if current
              else queries.insert_if_free)
    with _storable(owner, scope):
        inserted = insert(conn, _new_row(owner, scope, pool, network))
    return str(network) if inserted else None


def lock_and_insert(conn, summaries, owner, scope, pool, taken_map):
    """Lock the scope, inserting a candidate drawn before if that is safe.

    The candidate is drawn from the scope's summary and inserted in the
    statement that locks the scope (on PostgreSQL; elsewhere right after
    it) only if the summary is current at the generation the lock returns
    (see :mod:`.search`); otherwise nothing is inserted and the scope is
    locked all the same.

    :returns: ``(generation, cidr, summary)``: what
        :func:`~.queries.lock_scope` returns, and the CIDR inserted and
        the summary to settle, or None and None.
    """
    summary = summaries.get(scope, pool)
    drawn = summary.draw(taken_map, _RANDOM) if summary is not None else None
    if drawn is None:
        return queries.lock_scope(conn, scope), None, None
    index, current_at = drawn
    network = pool[index]
    with _storable(owner, scope):
        generation, inserted = queries.lock_and_insert(
            conn, scope, current_at + 1, _new_row(owner, scope, pool,
                                                  network))
    if not inserted:
        return generation, None, None
    summary.block(index)
    return generation, str(network), summary


def insert_in_scope(conn, summaries, owner, scope, pool, taken_set,
                    taken_map, cutoff, generation):
    """Insert a free candidate of a named scope; see :mod:`.search`.

    :param summaries: the driver's :class:`~.search.Summaries`.
    :param cutoff: released rows older than it may be freed.
    :param generation: what :func:`~.queries.lock_scope` returned in this
        transaction.
    :returns: ``(cidr, summary, complete)``: the CIDR inserted, or None if
        the owner holds a CIDR or no candidate is free; the summary to
        settle at ``generation`` once the transaction commits, which holds
        what it changed; and whether it was read in full in it.
    """
    summary = summaries.get(scope, pool)
    complete = summary is None
    if complete:
        summary = read_summary(conn, pool, scope, taken_set, cutoff)
    current = complete or summary.is_current(generation)
    misses = 0
    while True:
        index = summary.pick(taken_map, _RANDOM)
        if index is None:
            if complete or not taken_map.free:
                return None, summary, complete
            summary = read_summary(conn, pool, scope, taken_set, cutoff)
            complete = current = True
            continue
        cidr = _insert(conn, owner, scope, pool, index, current)
        if cidr is not None:
            summary.block(index)
            return cidr, summary, complete
        # The owner holds a CIDR, or the candidate is used.
        lo, hi = search.window(pool, index)
        rows, held = queries.read_window(
            conn, scope, pool.version, pool.first_address(lo),
            pool[hi].last, owner=owner)
        if held:
            return None, summary, complete
        summary.learn(lo, hi, taken_mod.TakenSet(
            pool.version, [(int(r.range_first, 16),
                            int(r.range_last, 16)) for r in rows]))
        # Whatever the rows said, this candidate is not drawn again.
        summary.block(index)
        misses += 1
        if misses >= search.MAX_MISSES and not complete:
            summary = read_summary(conn, pool, scope, taken_set, cutoff)
            complete = current = True


def read_summary(conn, pool, scope, taken_set, cutoff):
    """Read the scope's rows in full; free the released rows that may be.

    Called with the scope's lock held and ``taken`` read after it. The
    summary is kept only once the transaction has committed
    (:meth:`~.search.Summaries.settle`).

    :returns: the :class:`~.search.Summary`.
    """
    rows = [r for network in pool.networks
            for r in queries.held_between(conn, scope, pool.version,
                                          network.first, network.last)]
    freeable = releasing.freeable(rows, cutoff, taken_set)
    if freeable:
        releasing.free_rows(conn, scope, pool.version, freeable)
    return search.Summary(pool, taken_mod.TakenSet(
        pool.version, [(int(r.range_first, 16), int(r.range_last, 16))
                       for r in rows if r.range_first not in freeable]))


def held_in_pool(conn, pool, scope):
    """What the scope's rows hold of ``pool``, as a :class:`~.TakenSet`."""
    intervals = []
    for network in pool.networks:
        intervals.extend(
            (int(r.range_first, 16), int(r.range_last, 16))
            for r in queries.held_between(conn, scope, pool.version,
                                          network.first, network.last))
    return taken_mod.TakenSet(pool.version, intervals)
