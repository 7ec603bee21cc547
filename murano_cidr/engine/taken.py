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

"""CIDRs already in use, read once into sorted, merged address intervals:
:class:`TakenSet`, answering overlap questions in ``O(log n)``.
"""

import bisect
import functools
import operator

import netaddr

from murano_cidr import exceptions

# NOTE: not a netaddr.IPSet, while the bench's taken-warm target holds
# (doc/source/benchmarks.rst).

#: Why a string that netaddr refuses is not a CIDR.
NOT_A_CIDR = "not an IPv4 or IPv6 network in CIDR notation"


def parse_cidr(value, name="taken"):
    """Parse one CIDR given as a string or a :class:`netaddr.IPNetwork`.

    Host bits are ignored, as Neutron and netaddr do.

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
        # NOTE: not netaddr's message, which repeats the value raw.
        raise exceptions.InvalidCidr(value=value, name=name,
                                     reason=NOT_A_CIDR)


#: How many parsed CIDR strings are kept: a router's CIDRs are read again
#: for every deployment on it.
PARSE_CACHE_SIZE = 2 ** 16


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def _cached_interval(text):
    net = parse_cidr(text)
    return net.version, (net.first, net.last)


def clear_parse_cache():
    """Forget every parsed CIDR string (benchmarks measure a cold read)."""
    _cached_interval.cache_clear()


def _merge(intervals):
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
    """Address ranges in use for one IP version.

    :param version: 4 or 6.
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
        # NOTE: flat on purpose: every allocation pays it per taken CIDR.
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
        """Return the intervals that meet ``[first, last]``, unclipped."""
        i = bisect.bisect_right(self._starts, first) - 1
        if i < 0 or self._ends[i] < first:
            i += 1
        j = bisect.bisect_right(self._starts, last)
        return list(zip(self._starts[i:j], self._ends[i:j]))

    def overlaps(self, first, last):
        """Tell whether integer addresses ``[first, last]`` meet any taken."""
        i = bisect.bisect_right(self._starts, last) - 1
        return i >= 0 and self._ends[i] >= first

    def union(self, other):
        """Return a new :class:`TakenSet` of both sets' addresses."""
        return TakenSet(self.version, self.intervals() + other.intervals())
