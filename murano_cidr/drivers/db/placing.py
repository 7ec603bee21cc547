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
``taken`` and the scope's summary (:mod:`murano_cidr.drivers.db.search`, a
hint) leave free and inserted unless the database finds a row of the scope
overlapping it; a miss reads the rows around the candidate into the
summary. A full read of the scope's
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


def _insert(conn, owner, scope, pool, index):
    """Insert candidate ``index`` unless the database finds it used.

    :returns: its CIDR, or None if the owner holds a CIDR or a row of the
        scope overlaps it.
    """
    if index is None:
        return None
    network = pool[index]
    with _storable(owner, scope):
        inserted = queries.insert_if_free(
            conn, _new_row(owner, scope, pool, network))
    return str(network) if inserted else None


def insert_in_scope(conn, summaries, owner, scope, pool, taken_set,
                    taken_map, cutoff):
    """Insert a free candidate of a named scope; see :mod:`.search`.

    Call it holding the scope's lock, ``taken`` read after it.

    :param summaries: the driver's :class:`~.search.Summaries`: which
        candidate to try, never whether it is free.
    :param cutoff: released rows older than it may be freed.
    :returns: the CIDR inserted, or None if the owner holds a CIDR or no
        candidate is free.
    """
    summary = summaries.get(scope, pool)
    complete = summary is None
    if complete:
        summary = read_summary(conn, summaries, pool, scope, taken_set,
                               cutoff)
    misses = 0
    while True:
        index = summary.pick(taken_map, _RANDOM)
        if index is None:
            if complete or not taken_map.free:
                return None
            summary = read_summary(conn, summaries, pool, scope, taken_set,
                                   cutoff)
            complete = True
            continue
        cidr = _insert(conn, owner, scope, pool, index)
        if cidr is not None:
            summary.block(index)
            return cidr
        # The owner holds a CIDR, or the candidate is used.
        lo, hi = search.window(pool, index)
        rows, held = queries.read_window(
            conn, scope, pool.version, pool.first_address(lo),
            pool[hi].last, owner=owner)
        if held:
            return None
        summary.learn(lo, hi, taken_mod.TakenSet(
            pool.version, [(int(r.range_first, 16),
                            int(r.range_last, 16)) for r in rows]))
        # Whatever the rows said, this candidate is not drawn again.
        summary.block(index)
        misses += 1
        if misses >= search.MAX_MISSES and not complete:
            summary = read_summary(conn, summaries, pool, scope, taken_set,
                                   cutoff)
            complete = True


def read_summary(conn, summaries, pool, scope, taken_set, cutoff):
    """Read the scope's rows in full; free the released rows that may be.

    Called with the scope's lock held and ``taken`` read after it. The
    summary is kept as the scope's hint (:meth:`~.search.Summaries.keep`).

    :returns: the :class:`~.search.Summary`.
    """
    rows = [r for network in pool.networks
            for r in queries.held_between(conn, scope, pool.version,
                                          network.first, network.last)]
    freeable = releasing.freeable(rows, cutoff, taken_set)
    if freeable:
        releasing.free_rows(conn, scope, pool.version, freeable)
    summary = search.Summary(pool, taken_mod.TakenSet(
        pool.version, [(int(r.range_first, 16), int(r.range_last, 16))
                       for r in rows if r.range_first not in freeable]))
    summaries.keep(scope, summary)
    return summary


def held_in_pool(conn, pool, scope):
    """What the scope's rows hold of ``pool``, as a :class:`~.TakenSet`."""
    intervals = []
    for network in pool.networks:
        intervals.extend(
            (int(r.range_first, 16), int(r.range_last, 16))
            for r in queries.held_between(conn, scope, pool.version,
                                          network.first, network.last))
    return taken_mod.TakenSet(pool.version, intervals)
