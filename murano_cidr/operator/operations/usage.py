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

from murano_cidr.engine import taken as taken_mod
from murano_cidr import exceptions

#: Passed as ``scope`` to :func:`report` for every scope.
ALL = object()


def report(driver, scope=ALL, taken=(), ip_version=None):
    """Count what each scope uses of the pool of each IP version.

    Every count comes from the driver's own
    :meth:`~murano_cidr.engine.drivers.base.AllocatorDriver.usage` (the ``db``
    driver counts in SQL), one scope and IP version at a time.

    :param driver: an :class:`~murano_cidr.engine.drivers.base.AllocatorDriver`
        that keeps state.
    :param scope: one scope (None for allocations without a scope), or
        :data:`ALL` for every scope holding an allocation.
    :param taken: CIDRs in use outside the allocator; only with one scope.
    :param ip_version: 4 or 6, or None for every configured pool.
    :returns: a list of dictionaries as ``driver.usage`` returns them,
        sorted by scope and IP version, with ``outside``: the scope's live
        allocations outside the pool (see :func:`outside_pools`).
    :raises murano_cidr.exceptions.InvalidArgument: for ``taken`` without a
        scope, or a bad CIDR in it.
    :raises murano_cidr.exceptions.NotSupported: if the driver keeps no
        state.
    """
    versions = [ip_version] if ip_version else sorted(driver.pools)
    for version in versions:
        driver.pool(version)
    if scope is ALL and taken:
        raise exceptions.InvalidArgument(
            name="taken", value=", ".join(str(c) for c in taken),
            reason="belongs to one router; give a scope too")
    taken = [taken_mod.parse_cidr(c) for c in taken]
    if scope is ALL:
        keys = {(a.scope, a.ip_version) for a in driver.list()
                if a.ip_version in versions}
        if not keys:
            keys = {(None, v) for v in versions}
    else:
        keys = {(scope, v) for v in versions}
    rows = [driver.usage(scope=s, ip_version=v, taken=taken)
            for s, v in sorted(keys, key=lambda k: (k[0] or "", k[1]))]
    outside = outside_pools(driver, versions)
    for row in rows:
        row["outside"] = outside.get((row["scope"], row["ip_version"]), 0)
    return rows


def outside_pools(driver, versions):
    """Count the live allocations that lie outside their pool.

    After a pool change (``pool_cidrs``, ``env_ip_template``...) the rows
    of the old pool are still allocated, and still block their CIDRs on
    their routers, but the new pool's counts do not see them.

    :param driver: a driver that keeps state.
    :param versions: the IP versions to look at.
    :returns: ``{(scope, ip_version): count}`` of those outside.
    """
    counts = {}
    for allocation in driver.list():
        version = allocation.ip_version
        if version in versions and not driver.pool(version).contains(
                taken_mod.parse_cidr(allocation.cidr)):
            key = (allocation.scope, version)
            counts[key] = counts.get(key, 0) + 1
    return counts
