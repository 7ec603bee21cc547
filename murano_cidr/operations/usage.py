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

"""How much of the pool each scope uses."""

import collections

from murano_cidr import exceptions
from murano_cidr import taken as taken_mod

#: Passed as ``scope`` to :func:`report` for every scope.
ALL = object()


def scope_usage(pool, scope, held, taken=()):
    """Count what one scope uses of a pool.

    :param pool: the :class:`~murano_cidr.pool.Pool`.
    :param scope: the scope, for the result.
    :param held: CIDRs of the scope's live allocations.
    :param taken: CIDRs in use outside the allocator (from Neutron).
    :returns: a dictionary with ``scope``, ``ip_version``, ``pool``,
        ``prefixlen``, ``size``, ``allocations``, ``allocated`` (candidates
        blocked by the allocations), ``taken`` (blocked by ``taken`` only),
        ``free`` and ``used_percent``.
    """
    held = list(held)
    result = pool.usage(
        taken_mod.TakenSet.from_taken(held, pool.version),
        taken_mod.TakenSet.from_taken(taken, pool.version))
    result.update(scope=scope, ip_version=pool.version,
                  allocations=len(held))
    return result


def report(driver, scope=ALL, taken=(), ip_version=None):
    """Count what each scope uses of the pool of each IP version.

    :param driver: an :class:`~murano_cidr.drivers.base.AllocatorDriver`
        that keeps state.
    :param scope: one scope (None for allocations without a scope), or
        :data:`ALL` for every scope holding an allocation.
    :param taken: CIDRs in use outside the allocator; only with one scope.
    :param ip_version: 4 or 6, or None for every configured pool.
    :returns: a list of dictionaries as :func:`scope_usage` returns, sorted
        by scope and IP version.
    :raises murano_cidr.exceptions.InvalidArgument: for ``taken`` without a
        scope, or a bad CIDR in it.
    :raises murano_cidr.exceptions.NotSupported: if the driver keeps no
        state.
    """
    versions = [ip_version] if ip_version else sorted(driver.pools)
    pools = {v: driver.pool(v) for v in versions}
    if scope is ALL and taken:
        raise exceptions.InvalidArgument(
            name="taken", value=", ".join(str(c) for c in taken),
            reason="belongs to one router; give a scope too")
    taken = [taken_mod.parse_cidr(c) for c in taken]
    held = collections.defaultdict(list)
    allocations = driver.list() if scope is ALL else driver.list(scope=scope)
    for a in allocations:
        if a.ip_version in pools and (scope is ALL or a.scope == scope):
            held[(a.scope, a.ip_version)].append(a.cidr)
    keys = set(held)
    if scope is not ALL:
        keys.update((scope, v) for v in versions)
    elif not keys:
        keys.update((None, v) for v in versions)
    return [scope_usage(pools[v], s, held.get((s, v), ()), taken)
            for s, v in sorted(keys, key=lambda k: (k[0] or "", k[1]))]
