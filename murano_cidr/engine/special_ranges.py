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

"""Address ranges a pool must not (:func:`refuse`), or should not
(:func:`warn_if_public`), hand out: netaddr's, not a table of our own.

doc/source/contributor/drivers.rst ("Special ranges") says which and why.
"""

import netaddr
from netaddr import ip as netaddr_ip
from oslo_log import log as logging

from murano_cidr import exceptions

LOG = logging.getLogger(__name__)

#: Refused ranges by IP version, as ``(label, netaddr names)``.
_REFUSED = {
    4: (("loopback", ("IPV4_LOOPBACK",)),
        ("link-local", ("IPV4_LINK_LOCAL",)),
        ("multicast", ("IPV4_MULTICAST",)),
        ("reserved", ("IPV4_RESERVED",))),
    6: (("loopback", ("IPV6_LOOPBACK",)),
        ("link-local", ("IPV6_LINK_LOCAL",)),
        ("multicast", ("IPV6_MULTICAST",)),
        ("reserved", ("IPV6_RESERVED",))),
}

#: netaddr's IPv4 space that is not public (0.10 on; before: private).
_NOT_PUBLIC_V4 = ("IPV4_NOT_GLOBALLY_REACHABLE", "IPV4_PRIVATE")

#: How many public ranges a warning names before it counts the rest.
SHOWN = 4


def _items(name):
    value = getattr(netaddr_ip, name, ())
    if isinstance(value, (netaddr.IPAddress, netaddr.IPNetwork,
                          netaddr.IPRange)):
        return [value]
    return list(value)


def _bounds(item):
    if isinstance(item, netaddr.IPAddress):
        return int(item), int(item)
    return item.first, item.last


def _cidrs(items, version):
    cidrs = []
    for item in items:
        first, last = _bounds(item)
        cidrs.extend(netaddr.iprange_to_cidrs(
            netaddr.IPAddress(first, version),
            netaddr.IPAddress(last, version)))
    return cidrs


def refused_ranges(networks):
    """Return the refused ranges networks of one IP version reach into.

    :returns: ``(range, label)`` pairs, a range inside one named before
        left out.
    """
    networks = list(networks)
    if not networks:
        return []
    version = networks[0].version
    found = []
    named = []
    for label, names in _REFUSED[version]:
        for name in names:
            for item in _items(name):
                first, last = _bounds(item)
                if any(f <= first and last <= l for f, l in named):
                    continue
                if any(n.first <= last and first <= n.last
                       for n in networks):
                    found.append((str(item), label))
                    named.append((first, last))
    return found


def public_networks(networks):
    """Return the public IPv4 networks within networks (none for IPv6)."""
    networks = list(networks)
    if not networks or networks[0].version != 4:
        return []
    for name in _NOT_PUBLIC_V4:
        not_public = _items(name)
        if not_public:
            break
    public = netaddr.IPSet(networks) - netaddr.IPSet(_cidrs(not_public, 4))
    return sorted(public.iter_cidrs())


def describe(ranges, shown=SHOWN):
    """Name the first ``shown`` ranges and count the rest (``and 27 more``)."""
    ranges = [str(r) for r in ranges]
    text = ", ".join(ranges[:shown])
    if len(ranges) > shown:
        text += " and %d more" % (len(ranges) - shown)
    return text


def refuse(networks, option):
    """Refuse a pool's networks that reach into a refused range.

    :raises murano_cidr.exceptions.InvalidConfig: naming ``option`` and
        the ranges.
    """
    refused = refused_ranges(networks)
    if refused:
        raise exceptions.InvalidConfig(
            option=option,
            reason="%s reaches into addresses no tenant subnet can use: %s; "
            "carve the pool from private ranges (10.0.0.0/8, 172.16.0.0/12, "
            "192.168.0.0/16; fd00::/8 for IPv6) or from space routed to "
            "your cloud" % (",".join(str(n) for n in networks),
                            describe(["%s (%s)" % r for r in refused],
                                     shown=10)))


def public_warning(pool):
    """Return the warning about a pool's public addresses, or None."""
    public = public_networks(pool.networks)
    if not public:
        return None
    return ("The IPv4 pool %s holds publicly routable addresses (%s): an "
            "environment given a subnet there cannot reach the real hosts "
            "of those addresses. Use private ranges unless these addresses "
            "are routed to your cloud." % (pool, describe(public)))


def warn_if_public(pool):
    """Log :func:`public_warning` of a pool, if there is one."""
    warning = public_warning(pool)
    if warning:
        LOG.warning("%s", warning)
