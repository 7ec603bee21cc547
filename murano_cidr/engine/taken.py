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

"""CIDRs already in use, read once into sorted, merged address intervals.

Reading ``taken`` is the one cost an allocation cannot avoid: every string has
to be parsed. Everything after that is ``O(log n)`` per question asked, so an
allocation from a pool of millions never loops over pool x taken.
"""

import bisect
import functools
import operator

import netaddr

from murano_cidr import exceptions

# NOTE: one sort, one merge and bisect, not a netaddr.IPSet, as long as
# murano-cidr bench's taken-warm target holds (doc/source/benchmarks.rst).

#: Why a string that netaddr refuses is not a CIDR.
NOT_A_CIDR = "not an IPv4 or IPv6 network in CIDR notation"


def parse_cidr(value, name="taken"):
    """Parse one CIDR given as a string or a :class:`netaddr.IPNetwork`.

    Host bits are allowed and ignored (``10.0.0.5/24`` is ``10.0.0.0/24``),
    because that is what Neutron and netaddr accept for a subnet.

    :param value: a CIDR string or a :class:`netaddr.IPNetwork`.
    :param name: what the value is, for the error message.
    :returns: a :class:`netaddr.IPNetwork`.
    :raises murano_cidr.exceptions.InvalidCidr: if the value is not a CIDR.
    """
    if isinstance(value, netaddr.IPNetwork):
        return value
    if not isinstance(value, str):
        raise exceptions.InvalidCidr(
            value=value, name=name,
            reason="expected a CIDR string or netaddr.IPNetwork, got %s"
            % type(value).__name__)
    try:
        return netaddr.IPNetwork(value.strip())
    except (netaddr.AddrFormatError, ValueError, TypeError):
        # NOTE: netaddr's message repeats the value raw (newlines, terminal
        # escapes and all); the message shows it escaped, as owners are.
        raise exceptions.InvalidCidr(value=value, name=name,
                                     reason=NOT_A_CIDR)


#: How many parsed CIDR strings are kept. An engine reads the same router's
#: CIDRs again for every deployment on it; remembering what a string parsed
#: to makes that read a dictionary look-up instead of a netaddr parse.
PARSE_CACHE_SIZE = 2 ** 16


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def _cached_interval(text):
    net = parse_cidr(text)
    # NOTE: the pair is built once and shared by every later read, which
    # then allocates nothing per taken CIDR.
    return net.version, (net.first, net.last)


def clear_parse_cache():
    """Forget every parsed CIDR string (benchmarks measure a cold read)."""
    _cached_interval.cache_clear()


def _merge(intervals):
    # Sorting on the first address alone is enough to merge, and much
    # cheaper than comparing pairs.
    ordered = iter(sorted(intervals, key=operator.itemgetter(0)))
    starts = []
    ends = []
    current = next(ordered, None)
    if current is None:
        return starts, ends
    cur_first, cur_last = current
    for first, last in ordered:
        if first <= cur_last + 1:
            if last > cur_last:
                cur_last = last
        else:
            starts.append(cur_first)
            ends.append(cur_last)
            cur_first, cur_last = first, last
    starts.append(cur_first)
    ends.append(cur_last)
    return starts, ends


class TakenSet(object):
    """Address ranges in use for one IP version, answering overlap queries.

    :param version: 4 or 6; networks of the other version are ignored, since
        they can never overlap a candidate of this one.
    :param intervals: inclusive ``(first, last)`` integer address pairs.
    """

    def __init__(self, version, intervals=()):
        self.version = version
        self._starts, self._ends = _merge(intervals)

    @classmethod
    def from_taken(cls, taken, version, name="taken"):
        """Read ``taken`` as the allocator contract accepts it.

        :param taken: an iterable of CIDR strings or
            :class:`netaddr.IPNetwork`, or a callable returning one.
        :param version: the IP version of the pool (4 or 6).
        :param name: what ``taken`` is, for error messages.
        :returns: a :class:`TakenSet`.
        :raises murano_cidr.exceptions.InvalidCidr: if an item is not a CIDR.
        :raises murano_cidr.exceptions.InvalidArgument: if ``taken`` is not
            iterable.
        """
        if callable(taken):
            taken = taken()
        if taken is None:
            taken = ()
        if isinstance(taken, (str, bytes, netaddr.IPNetwork)):
            # NOTE: a lone string would otherwise be read character by
            # character; insist on a collection so the mistake is visible.
            raise exceptions.InvalidArgument(
                name=name, value=taken,
                reason="expected a collection of CIDRs, not a single value")
        try:
            items = iter(taken)
        except TypeError:
            raise exceptions.InvalidArgument(
                name=name, value=taken,
                reason="expected an iterable of CIDRs or a callable "
                "returning one")
        intervals = []
        append = intervals.append
        cached = _cached_interval
        # NOTE: this loop is the one cost every allocation pays per taken
        # CIDR; it is kept flat on purpose.
        for item in items:
            if type(item) is str:
                try:
                    item_version, pair = cached(item)
                except exceptions.InvalidCidr:
                    parse_cidr(item, name)
                    raise
            else:
                net = parse_cidr(item, name)
                item_version, pair = net.version, (net.first, net.last)
            if item_version == version:
                append(pair)
        return cls(version, intervals)

    def __len__(self):
        """Number of disjoint address intervals held."""
        return len(self._starts)

    def intervals(self):
        """Return the merged ``(first, last)`` intervals, sorted."""
        return list(zip(self._starts, self._ends))

    def intervals_within(self, first, last):
        """Return the intervals that meet ``[first, last]``, unclipped.

        Found by bisection: the cost is ``O(log n)`` plus the answer.
        """
        i = bisect.bisect_right(self._starts, first) - 1
        if i < 0 or self._ends[i] < first:
            i += 1
        j = bisect.bisect_right(self._starts, last)
        return list(zip(self._starts[i:j], self._ends[i:j]))

    def overlaps(self, first, last):
        """Tell whether ``[first, last]`` meets any taken address.

        :param first: first address of the range, as an integer.
        :param last: last address of the range, as an integer.
        :returns: True if any taken address lies within the range.
        """
        i = bisect.bisect_right(self._starts, last) - 1
        return i >= 0 and self._ends[i] >= first

    def union(self, other):
        """Return a new set holding the addresses of both sets.

        :param other: a :class:`TakenSet` of the same IP version.
        :returns: a :class:`TakenSet`.
        """
        return TakenSet(self.version, self.intervals() + other.intervals())
