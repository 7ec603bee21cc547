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

"""The checks of networks an operator gives: pools' and the commands'."""

from murano_cidr.engine import special_ranges
from murano_cidr.engine import taken
from murano_cidr import exceptions


def network(value, name):
    """Parse a network an operator gives, refusing a mistyped one.

    It must name its prefix length and have no host bits set, as Neutron
    requires of a subnet.

    :param value: a CIDR string or a :class:`netaddr.IPNetwork`.
    :param name: where it was given, for the message.
    :returns: a :class:`netaddr.IPNetwork`.
    :raises murano_cidr.exceptions.InvalidCidr: if it is not such a CIDR.
    """
    if isinstance(value, str) and "/" not in value:
        raise exceptions.InvalidCidr(value=value, name=name,
                                     reason="it has no prefix length")
    net = taken.parse_cidr(value, name)
    if net.ip != net.network:
        raise exceptions.InvalidCidr(
            value=str(value).strip(), name=name,
            reason="it has host bits set; did you mean %s?" % net.cidr)
    return net


def networks(cidrs, prefixlen, cidrs_option, prefixlen_option, version,
             limits):
    """Return the parent networks of a pool, checked.

    :param cidrs: CIDRs in candidate order, or one comma-separated string;
        they must not overlap.
    :param prefixlen: the prefix length of every candidate subnet.
    :param cidrs_option: the option ``cidrs`` came from, for errors.
    :param prefixlen_option: the option ``prefixlen`` came from.
    :param version: if not None, the IP version every network must have.
    :param limits: ``(address width by IP version, host bits a subnet
        keeps, most candidates)``.
    :returns: a list of :class:`netaddr.IPNetwork`, in candidate order.
    :raises murano_cidr.exceptions.InvalidConfig: naming the option at
        fault.
    """
    widths, min_host_bits, max_size = limits
    if isinstance(cidrs, str):
        cidrs = cidrs.split(",")
    cidrs = [c for c in cidrs
             if not (isinstance(c, str) and not c.strip())]
    if not cidrs:
        raise exceptions.InvalidConfig(option=cidrs_option,
                                       reason="is empty")
    parents = []
    for value in cidrs:
        try:
            net = network(value, cidrs_option)
        except exceptions.InvalidCidr as e:
            raise exceptions.InvalidConfig(
                option=cidrs_option,
                reason="%r: %s" % (value, e.kwargs["reason"]))
        parents.append(net.cidr)
    versions = sorted({n.version for n in parents})
    if len(versions) > 1:
        raise exceptions.InvalidConfig(
            option=cidrs_option,
            reason="mixes IPv4 and IPv6 parents (%s); one pool holds one "
            "IP version" % ", ".join(str(n) for n in parents))
    pool_version = versions[0]
    if version is not None and pool_version != version:
        raise exceptions.InvalidConfig(
            option=cidrs_option,
            reason="holds IPv%d parents where IPv%d ones are expected"
            % (pool_version, version))
    width = widths[pool_version]
    if (isinstance(prefixlen, bool) or not isinstance(prefixlen, int)):
        raise exceptions.InvalidConfig(
            option=prefixlen_option,
            reason="must be an integer, got %r" % (prefixlen,))
    if prefixlen > width - min_host_bits:
        raise exceptions.InvalidConfig(
            option=prefixlen_option,
            reason="/%d subnets leave no room for a gateway and hosts; "
            "use at most /%d" % (prefixlen, width - min_host_bits))
    for net in parents:
        if prefixlen < net.prefixlen:
            raise exceptions.InvalidConfig(
                option=prefixlen_option,
                reason="/%d subnets do not fit in %s from %s"
                % (prefixlen, net, cidrs_option))
    ordered = sorted(parents, key=lambda n: n.first)
    for a, b in zip(ordered, ordered[1:]):
        if b.first <= a.last:
            raise exceptions.InvalidConfig(
                option=cidrs_option,
                reason="%s and %s overlap" % (a, b))
    size = sum(2 ** (prefixlen - n.prefixlen) for n in parents)
    if size > max_size:
        raise exceptions.InvalidConfig(
            option=prefixlen_option,
            reason="/%d subnets of %s make a pool of %d, beyond the limit "
            "of %d" % (prefixlen, ", ".join(str(n) for n in parents),
                       size, max_size))
    special_ranges.refuse(parents, cidrs_option)
    return parents
