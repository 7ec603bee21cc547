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

"""Which candidates of a pool are free, as blocked index ranges.

:class:`FreeMap` answers "the n-th free" and "the next free" in ``O(log
n)``; :class:`BlockedRanges` is changed one range at a time. Pure.
"""

import bisect

# NOTE: not netaddr.IPSet, which has no rank or select (the n-th free in
# O(log n)), while the bench's targets hold (doc/source/benchmarks.rst).


class FreeMap(object):
    """The free candidates of a pool, as the complement of blocked ranges.

    :param size: the number of candidates in the pool.
    :param ranges: inclusive ``(lo, hi)`` index ranges of blocked candidates.
    :ivar blocked: the number of blocked candidates.
    :ivar free: the number of free candidates.
    """

    def __init__(self, size, ranges):
        self.size = size
        self._los = []
        self._his = []
        self._blocked_before = []
        blocked = 0
        for lo, hi in sorted(ranges):
            if self._his and lo <= self._his[-1] + 1:
                if hi > self._his[-1]:
                    blocked += hi - self._his[-1]
                    self._his[-1] = hi
                continue
            self._los.append(lo)
            self._his.append(hi)
            self._blocked_before.append(blocked)
            blocked += hi - lo + 1
        self.blocked = blocked
        self.free = size - blocked

    def blocked_ranges(self):
        """Return the blocked index ranges, merged and sorted.

        :returns: a list of inclusive ``(lo, hi)`` pairs.
        """
        return list(zip(self._los, self._his))

    def is_free(self, index):
        """Tell whether candidate ``index`` is free."""
        i = bisect.bisect_right(self._los, index) - 1
        return i < 0 or self._his[i] < index

    def nth_free(self, n):
        """Return the index of the ``n``-th free candidate (0-based).

        :raises IndexError: if fewer than ``n + 1`` candidates are free.
        """
        if not 0 <= n < self.free:
            raise IndexError("%d free candidates, asked for number %d"
                             % (self.free, n))
        # Free candidates before range k (lo_k - blocked_before_k) grow
        # with k: bisect for the last range before the answer.
        lo_, hi_ = 0, len(self._los)
        while lo_ < hi_:
            mid = (lo_ + hi_) // 2
            if self._los[mid] - self._blocked_before[mid] <= n:
                lo_ = mid + 1
            else:
                hi_ = mid
        k = lo_ - 1
        if k < 0:
            return n
        return n + self._blocked_before[k] + (self._his[k] - self._los[k] + 1)

    def next_free(self, start):
        """Return the first free index at or after ``start``, wrapping.

        This is Murano's linear probe, answered without probing.

        :returns: an index, or None if no candidate is free.
        """
        if self.free == 0:
            return None
        start %= self.size
        i = bisect.bisect_right(self._los, start) - 1
        if i >= 0 and self._his[i] >= start:
            start = self._his[i] + 1
            if start >= self.size:
                start = 0
                if self._los and self._los[0] == 0:
                    start = self._his[0] + 1
        return start


class BlockedRanges(object):
    """Blocked candidates of a pool, kept merged, changed range by range.

    :param size: the number of candidates in the pool.
    :param ranges: inclusive ``(lo, hi)`` ranges, merged and sorted (as
        :meth:`FreeMap.blocked_ranges` returns them).
    """

    def __init__(self, size, ranges=()):
        self.size = size
        self._los = [lo for lo, _hi in ranges]
        self._his = [hi for _lo, hi in ranges]

    def __len__(self):
        """The number of disjoint blocked ranges."""
        return len(self._los)

    def is_blocked(self, index):
        """Tell whether candidate ``index`` is blocked."""
        i = bisect.bisect_right(self._los, index) - 1
        return i >= 0 and self._his[i] >= index

    def next_unblocked(self, index):
        """Return the first unblocked index at or after ``index``, or None.

        Never wraps: None if every candidate from ``index`` on is blocked.
        """
        i = bisect.bisect_right(self._los, index) - 1
        if i >= 0 and self._his[i] >= index:
            index = self._his[i] + 1
        return index if index < self.size else None

    def add(self, lo, hi):
        """Block the candidates ``lo`` to ``hi`` (inclusive)."""
        i = bisect.bisect_left(self._his, lo - 1)
        j = bisect.bisect_right(self._los, hi + 1)
        if i < j:
            lo = min(lo, self._los[i])
            hi = max(hi, self._his[j - 1])
        self._los[i:j] = [lo]
        self._his[i:j] = [hi]

    def discard(self, lo, hi):
        """Unblock the candidates ``lo`` to ``hi`` (inclusive)."""
        i = bisect.bisect_left(self._his, lo)
        j = bisect.bisect_right(self._los, hi)
        if i >= j:
            return
        los, his = [], []
        if self._los[i] < lo:
            los.append(self._los[i])
            his.append(lo - 1)
        if self._his[j - 1] > hi:
            los.append(hi + 1)
            his.append(self._his[j - 1])
        self._los[i:j] = los
        self._his[i:j] = his
