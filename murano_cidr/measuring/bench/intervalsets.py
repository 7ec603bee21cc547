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

"""Each hand-written interval set against its ``netaddr`` equivalent.

At 4,096 rows: a pool of 8,192 ``/24`` s under ``10.0.0.0/11`` with 4,096
of them taken, spread uniformly. Each piece is timed doing one job both
ways, and both ways must give the same answer (checked before timing):

* ``taken``: read the taken strings into a set and ask whether one
  candidate overlaps it (:class:`murano_cidr.engine.taken.TakenSet` against
  :class:`netaddr.IPSet`), on a first read of the strings and once they
  were parsed before (every later pick on the same router; the first
  read has no target: both ways are netaddr's parse of every string);
* ``freemap-nth``, ``freemap-next``: from that set, the n-th free
  candidate (``random``, ``db`` and ``lock``) and the first free one from
  a start (``legacy``) (:meth:`murano_cidr.engine.pool.Pool.free_map` and
  :class:`murano_cidr.engine.freemap.FreeMap` against the pool's
  :class:`netaddr.IPSet` minus the taken one);
* ``hint``: the ``db`` driver's hint of a scope of 4,096 rows, built and
  used for one pick (test a candidate, mark it used;
  :class:`murano_cidr.engine.freemap.BlockedRanges` against an
  :class:`netaddr.IPSet` of the blocked candidates);
* ``walk``: the ``db`` driver's search when its draws miss, the first
  candidate free in ``taken`` and in a hint of 2,048 other rows
  (``_first_free`` of :mod:`murano_cidr.engine.drivers.db.hints` against
  the pool's IPSet minus both);
* ``block``: candidate ``i`` of the pool as a network (the pool's block
  arithmetic against :meth:`netaddr.IPNetwork.subnet`);
* ``overlaps``: which of 4,096 rows of one scope, 256 of them inside
  another (one in 16), overlap another
  (:func:`murano_cidr.operator.overlaps.scope_overlaps` against a dictionary of
  the rows' networks and :meth:`netaddr.IPNetwork.supernet`).

A hand-written piece stays only where it is more than twice as fast:
each is a target of ``murano-cidr bench`` (``doc/source/benchmarks.rst``).
"""

import dataclasses
import random

import netaddr

from murano_cidr.engine.drivers.db import hints
from murano_cidr.engine import freemap
from murano_cidr.engine import pool as pool_mod
from murano_cidr.engine import taken as taken_mod
from murano_cidr.measuring.bench import timing
from murano_cidr.operator import overlaps

#: The rows of every comparison.
ROWS = 4096

#: The candidates' prefix length; the pool holds twice the rows of them
#: under 10.0.0.0, so that half are free.
PREFIXLEN = 24
CANDIDATES = 2 * ROWS

#: A hand-written piece is kept only when it is faster than this.
KEEP_RATIO = 2.0


def _nth_free_ipset(pool_set, taken_set, prefixlen, n):
    """The n-th free candidate, counted over the free set's CIDRs."""
    free = pool_set - taken_set
    for cidr in free.iter_cidrs():
        if cidr.prefixlen > prefixlen:
            continue
        count = 2 ** (prefixlen - cidr.prefixlen)
        if n < count:
            return netaddr.IPNetwork(
                (cidr.first + n * 2 ** (32 - prefixlen), prefixlen))
        n -= count
    return None


def _next_free_ipset(pool_set, taken_set, prefixlen, start):
    """The first free candidate at or after ``start``, wrapping."""
    free = pool_set - taken_set
    first = None
    for cidr in free.iter_cidrs():
        if cidr.prefixlen > prefixlen:
            continue
        if first is None:
            first = cidr.first
        if cidr.last >= start.first:
            return netaddr.IPNetwork((max(cidr.first, start.first),
                                      prefixlen))
    return None if first is None else netaddr.IPNetwork((first, prefixlen))


def _hint_hand(pool, rows, index):
    """What the db driver's Hint does: rows to blocked candidates."""
    held = taken_mod.TakenSet(4, rows)
    blocked = freemap.BlockedRanges(pool.size,
                                    pool.free_map(held).blocked_ranges())
    used = blocked.is_blocked(index)
    blocked.add(index, index)
    return used, blocked.is_blocked(index)


def _hint_ipset(pool, networks, index):
    """The same with an IPSet of the rows' networks."""
    blocked = netaddr.IPSet(networks)
    network = pool[index]
    used = network in blocked
    blocked.add(network)
    return used, network in blocked


def _overlaps_netaddr(rows):
    # Two CIDRs nest or are disjoint: a row overlaps another when one of
    # its supernets, or an equal network, is a row (an IPSet grown row by
    # row answers "inside?" but not "inside which", and is slower still).
    found = []
    by_cidr = {}
    for net, item in sorted(rows, key=lambda r: (r[0].first, -r[0].size)):
        widest = by_cidr.get(net)
        if widest is None:
            widest = next((by_cidr[s] for s in net.supernet(0)
                           if s in by_cidr), None)
        if widest is None:
            by_cidr[net] = item
        else:
            found.append((item, widest))
    return found


@dataclasses.dataclass
class Pair(object):
    """One piece timed both ways, in seconds (medians)."""

    name: str
    what: str
    hand: float
    netaddr: float
    #: Whether the piece must stay more than :data:`KEEP_RATIO` times
    #: faster (a target), or is shown only.
    target: bool = True

    @property
    def ratio(self):
        """How many times faster the hand-written piece is."""
        return self.netaddr / self.hand


def _pair(name, what, repeat, hand, other, target=True):
    """Time ``hand`` and ``other`` after checking they agree."""
    expected, got = hand(), other()
    if expected != got:
        raise AssertionError("%s: hand-written %r, netaddr %r"
                             % (name, expected, got))
    hand_times, other_times = [], []
    # NOTE: interleaved, so that both medians see the same machine.
    for _ in range(max(1, repeat)):
        hand_times.append(timing.time_call(hand)[0])
        other_times.append(timing.time_call(other)[0])
    return Pair(name, what, timing.percentile(hand_times, 0.5),
                timing.percentile(other_times, 0.5), target)


def _first_free_ipset(free, prefixlen, start):
    """The first free candidate at or after ``start``, or None."""
    for cidr in free.iter_cidrs():
        if cidr.prefixlen <= prefixlen and cidr.last >= start.first:
            return netaddr.IPNetwork((max(cidr.first, start.first),
                                      prefixlen))
    return None


def run(repeat=3, seed=1502437, rows=ROWS):
    """Time every piece both ways.

    :param repeat: timings of each, interleaved; the medians are kept.
    :param seed: seeds the taken candidates.
    :param rows: the rows, a power of two (the pool holds twice as many).
    :returns: a list of :class:`Pair`.
    :raises AssertionError: if the two ways of a piece disagree.
    """
    rng = random.Random(seed)
    parent = netaddr.IPNetwork((netaddr.IPAddress("10.0.0.0").value,
                                PREFIXLEN - rows.bit_length()))
    pool = pool_mod.Pool([parent], PREFIXLEN)
    indexes = rng.sample(range(pool.size), rows)
    taken = [pool.cidr(i) for i in indexes]
    parsed = {c: netaddr.IPNetwork(c) for c in taken}
    probe = pool[rng.randrange(pool.size)]
    probe_set = netaddr.IPSet([probe])
    out = []

    def taken_hand(cold):
        if cold:
            taken_mod.clear_parse_cache()
        return taken_mod.TakenSet.from_taken(taken, 4).overlaps(
            probe.first, probe.last)

    # NOTE: no target on the first read: both sides are netaddr's parse
    # of every string, which the project does not hand-write.
    out.append(_pair(
        "taken-cold", "read taken, one overlap question, every string "
        "parsed", repeat, lambda: taken_hand(True),
        lambda: not netaddr.IPSet(taken).isdisjoint(probe_set), False))
    out.append(_pair(
        "taken-warm", "the same, the strings parsed before", repeat,
        lambda: taken_hand(False),
        lambda: not netaddr.IPSet(
            parsed[c] for c in taken).isdisjoint(probe_set)))
    taken_mod.clear_parse_cache()

    hand_set = taken_mod.TakenSet.from_taken(taken, 4)
    ip_set = netaddr.IPSet(taken)
    pool_set = netaddr.IPSet(pool.networks)
    n = rng.randrange(pool.size - rows)
    start = rng.randrange(pool.size)
    out.append(_pair(
        "freemap-nth", "the n-th free candidate, given taken", repeat,
        lambda: pool[pool.free_map(hand_set).nth_free(n)],
        lambda: _nth_free_ipset(pool_set, ip_set, PREFIXLEN, n)))
    out.append(_pair(
        "freemap-next", "the first free candidate from a start, given "
        "taken", repeat,
        lambda: pool[pool.free_map(hand_set).next_free(start)],
        lambda: _next_free_ipset(pool_set, ip_set, PREFIXLEN, pool[start])))

    pairs = [(parsed[c].first, parsed[c].last) for c in taken]
    nets = [parsed[c] for c in taken]
    index = rng.randrange(pool.size)
    out.append(_pair(
        "hint", "a scope's hint built from its rows, one candidate tested "
        "and marked used", repeat,
        lambda: _hint_hand(pool, pairs, index),
        lambda: _hint_ipset(pool, nets, index)))

    # The db driver's walk when its draws miss: the first candidate that
    # both taken and the hint (other rows of the scope) leave free.
    others = rng.sample(range(pool.size), rows // 2)
    hint = freemap.BlockedRanges(pool.size, pool.free_map(taken_mod.TakenSet(
        4, [(pool[i].first, pool[i].last) for i in others])).blocked_ranges())
    hint_set = netaddr.IPSet(pool[i] for i in others)
    out.append(_pair(
        "walk", "the first candidate free in taken and in a hint of "
        "half as many rows, from a start", repeat,
        lambda: pool[hints._first_free(pool.free_map(hand_set), hint,
                                       start, pool.size - 1)],
        lambda: _first_free_ipset(pool_set - ip_set - hint_set, PREFIXLEN,
                                  pool[start])))

    out.append(_pair(
        "block", "candidate i of the pool as a network, for each row",
        repeat, lambda: [pool[i] for i in indexes],
        lambda: _block_netaddr(pool, indexes)))

    rows = _nested_rows(pool, indexes)
    out.append(_pair(
        "overlaps", "the rows of one scope that overlap another", repeat,
        lambda: overlaps.scope_overlaps(
            rows, lambda r: ("scope", 4, r[0].first, r[0].last)),
        lambda: _overlaps_netaddr([(r[0], r) for r in rows])))
    return out


def _block_netaddr(pool, indexes):
    # netaddr numbers subnets only by listing them: the pool is built.
    subnets = list(pool.networks[0].subnet(PREFIXLEN))
    return [subnets[i] for i in indexes]


def _nested_rows(pool, indexes):
    """The rows of one scope: /24s, and a /25 inside one in 16 of them."""
    inner = len(indexes) // 16
    rows = [(pool[i], "row %d" % n)
            for n, i in enumerate(indexes[:len(indexes) - inner])]
    rows += [(next(pool[i].subnet(PREFIXLEN + 1)), "inner %d" % n)
             for n, i in enumerate(indexes[:inner])]
    return rows
