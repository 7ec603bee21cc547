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

"""The one overlap check of a batch of allocations to import.

``murano-cidr import`` applies it to a file's rows, and drivers to what
they are asked to import; an engine never imports a batch, so this is not
in its path (:mod:`murano_cidr.engine.allocation` is).
"""


def scope_overlaps(items, extent):
    """Find the items that overlap another of their scope.

    :param items: anything describing allocations.
    :param extent: ``extent(item)`` returning ``(scope, ip_version, first,
        last)`` with the first and last addresses as integers, or None for
        an item that cannot overlap (no scope).
    :returns: a list of ``(item, other)`` pairs: ``item`` overlaps
        ``other``, which starts at or before it (the widest such); every
        overlapping item appears once, in address order within its scope.
    """
    groups, entries = {}, []
    for item in items:
        key = extent(item)
        if key is not None:
            group = groups.setdefault(key[:2], len(groups))
            entries.append((group, key[2], key[3], item))
    entries.sort(key=lambda e: (e[0], e[1], -e[2]))
    return list(inside(entries))


def inside(entries):
    """Yield the entries inside an earlier one of their group.

    Two CIDRs either nest or are disjoint, so one pass that keeps the last
    entry which overlapped none finds every entry inside another.

    :param entries: ``(group, first, last, item)`` tuples, sorted by group,
        then first address, the widest first; the addresses may be any
        values that compare as the addresses do (integers, fixed-width
        hexadecimal).
    :returns: an iterator of ``(item, other)`` pairs: ``item`` lies inside
        ``other``, the widest entry of its group that starts at or before
        it.
    """
    widest = None
    for entry in entries:
        if (widest is not None and entry[0] == widest[0]
                and entry[1] <= widest[2]):
            yield entry[3], widest[3]
        else:
            widest = entry
