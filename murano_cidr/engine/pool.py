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

"""The candidate subnets an allocator may hand out: :class:`Pool`.

A pool is never materialised: candidate ``i`` is computed from its index.
Murano's geometry gives the candidates Murano's engine computed, in its
order. :func:`pools_from_conf` reads ``[cidr_allocator]``; the rest is pure.
"""

import bisect

import netaddr

from murano_cidr.engine import freemap
from murano_cidr.engine import pool_cidrs
from murano_cidr.engine import special_ranges
from murano_cidr.engine import taken as taken_mod
from murano_cidr import exceptions
from murano_cidr import opts

#: The largest pool accepted, in candidates: a mistyped prefix length fails.
MAX_POOL_SIZE = 2 ** 24

#: Host bits a subnet must keep: room for a gateway and at least one host.
MIN_HOST_BITS = 2

#: The bits of an address, by IP version.
WIDTH = {4: 32, 6: 128}


def bits_for(count):
    """Return ``ceil(log2(count))`` of a positive integer, exactly."""
    return (count - 1).bit_length()


def _positive_int(value, option):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise exceptions.InvalidConfig(
            option=option,
            reason="must be a positive integer, got %r" % (value,))
    return value


class Pool(object):
    """Equal-sized candidate subnets of one IP version, in a fixed order.

    :meth:`from_murano` and :meth:`from_cidrs` validate; this trusts.

    :param networks: the parent networks, in candidate order.
    :param prefixlen: the prefix length of every candidate.
    """

    def __init__(self, networks, prefixlen):
        self.networks = tuple(networks)
        self.version = self.networks[0].version
        self.prefixlen = prefixlen
        width = WIDTH[self.version]
        self._step = 2 ** (width - prefixlen)
        self._firsts = []
        self._offsets = []
        size = 0
        for net in self.networks:
            self._firsts.append(net.first)
            self._offsets.append(size)
            size += 2 ** (prefixlen - net.prefixlen)
        self.size = size

    @classmethod
    def from_murano(cls, env_ip_template="10.0.0.0", max_environments=250,
                    max_hosts=250):
        """Build the pool Murano's engine used, from its three options.

        :raises murano_cidr.exceptions.InvalidConfig: naming the option at
            fault.
        """
        _positive_int(max_environments, "max_environments")
        _positive_int(max_hosts, "max_hosts")
        env_bits = bits_for(max_environments)
        host_bits = bits_for(max_hosts)
        if host_bits < MIN_HOST_BITS:
            raise exceptions.InvalidConfig(
                option="max_hosts",
                reason="%d hosts give /%d subnets, which leave no room for a "
                "gateway and hosts; use at least %d"
                % (max_hosts, 32 - host_bits, 2 ** (MIN_HOST_BITS - 1) + 1))
        if env_bits + host_bits > 32:
            raise exceptions.InvalidConfig(
                option="max_environments",
                reason="%d environments of %d hosts need %d bits, more than "
                "the 32 of an IPv4 address"
                % (max_environments, max_hosts, env_bits + host_bits))
        if 2 ** env_bits > MAX_POOL_SIZE:
            raise exceptions.InvalidConfig(
                option="max_environments",
                reason="a pool of %d subnets exceeds the limit of %d"
                % (2 ** env_bits, MAX_POOL_SIZE))
        if not isinstance(env_ip_template, str):
            raise exceptions.InvalidConfig(
                option="env_ip_template",
                reason="expected an IPv4 address, got %r" % (env_ip_template,))
        try:
            address = netaddr.IPAddress(env_ip_template.strip(),
                                        flags=netaddr.INET_PTON)
        except (netaddr.AddrFormatError, ValueError):
            raise exceptions.InvalidConfig(
                option="env_ip_template",
                reason="%r is not an IP address" % (env_ip_template,))
        if address.version != 4:
            raise exceptions.InvalidConfig(
                option="env_ip_template",
                reason="%s is not an IPv4 address; configure IPv6 pools with "
                "ipv6_pool_cidrs" % address)
        parent_prefix = 32 - env_bits - host_bits
        parent = netaddr.IPNetwork("%s/%d" % (address, parent_prefix))
        if parent.ip != parent.network:
            raise exceptions.InvalidConfig(
                option="env_ip_template",
                reason="%s is not aligned to the /%d that %d environments of "
                "%d hosts need; use %s"
                % (address, parent_prefix, max_environments, max_hosts,
                   parent.network))
        special_ranges.refuse([parent.cidr], "env_ip_template")
        return cls([parent.cidr], 32 - host_bits)

    @classmethod
    def from_cidrs(cls, cidrs, prefixlen, cidrs_option="pool_cidrs",
                   prefixlen_option="subnet_prefixlen", version=None):
        """Build a pool from explicit parent networks (``pool_cidrs``).

        See :func:`murano_cidr.engine.pool_cidrs.networks`.

        :raises murano_cidr.exceptions.InvalidConfig: naming the option at
            fault.
        """
        limits = (WIDTH, MIN_HOST_BITS, MAX_POOL_SIZE)
        return cls(pool_cidrs.networks(cidrs, prefixlen, cidrs_option,
                                       prefixlen_option, version, limits),
                   prefixlen)

    def __len__(self):
        return self.size

    def __str__(self):
        return ",".join(str(n) for n in self.networks)

    def __repr__(self):
        return "<Pool %s into /%d: %d subnets>" % (self, self.prefixlen,
                                                   self.size)

    def __eq__(self, other):
        return (isinstance(other, Pool) and self.networks == other.networks
                and self.prefixlen == other.prefixlen)

    def __hash__(self):
        return hash((self.networks, self.prefixlen))

    def _block_of(self, index):
        return bisect.bisect_right(self._offsets, index) - 1

    def first_address(self, index):
        """Return the first address of candidate ``index`` as an integer.

        :raises IndexError: if ``index`` is outside the pool.
        """
        if not 0 <= index < self.size:
            raise IndexError("candidate %d outside a pool of %d"
                             % (index, self.size))
        block = self._block_of(index)
        return (self._firsts[block]
                + (index - self._offsets[block]) * self._step)

    def __getitem__(self, index):
        """Return candidate ``index`` as a :class:`netaddr.IPNetwork`."""
        if index < 0:
            index += self.size
        first = self.first_address(index)
        return netaddr.IPNetwork((first, self.prefixlen),
                                 version=self.version)

    def __iter__(self):
        for index in range(self.size):
            yield self[index]

    def cidr(self, index):
        """Return candidate ``index`` as a CIDR string."""
        return str(self[index])

    def contains(self, cidr):
        """Tell whether a CIDR lies inside one of the pool's networks.

        :param cidr: a CIDR string or :class:`netaddr.IPNetwork`.
        :returns: True or False.
        :raises murano_cidr.exceptions.InvalidCidr: if ``cidr`` is not a
            CIDR.
        """
        net = taken_mod.parse_cidr(cidr, name="cidr")
        return net.version == self.version and any(
            p.first <= net.first and net.last <= p.last
            for p in self.networks)

    def free_map(self, taken):
        """Return which candidates overlap nothing in ``taken``.

        :param taken: a :class:`~murano_cidr.engine.taken.TakenSet` of this
            pool's IP version.
        :returns: a :class:`~murano_cidr.engine.freemap.FreeMap`.
        """
        ranges = []
        for block, parent in enumerate(self.networks):
            base = self._offsets[block]
            for first, last in taken.intervals_within(parent.first,
                                                      parent.last):
                lo = (max(first, parent.first) - parent.first) // self._step
                hi = (min(last, parent.last) - parent.first) // self._step
                ranges.append((base + lo, base + hi))
        return freemap.FreeMap(self.size, ranges)


def pools_from_conf(conf):
    """Build the pools of ``[cidr_allocator]`` (options registered).

    :returns: ``{ip version: Pool}``, without 6 if no IPv6 pool is set.
    :raises murano_cidr.exceptions.InvalidConfig: naming the option at fault.
    """
    group = conf[opts.GROUP]
    pools = {}
    if group.pool_cidrs:
        prefixlen = group.subnet_prefixlen
        prefixlen_option = "subnet_prefixlen"
        if prefixlen is None:
            prefixlen = 32 - bits_for(_positive_int(group.max_hosts,
                                                    "max_hosts"))
            prefixlen_option = "max_hosts"
        pools[4] = Pool.from_cidrs(
            group.pool_cidrs, prefixlen, "pool_cidrs", prefixlen_option,
            version=4)
    else:
        pools[4] = Pool.from_murano(
            group.env_ip_template, group.max_environments, group.max_hosts)
    special_ranges.warn_if_public(pools[4])
    if group.ipv6_pool_cidrs:
        pools[6] = Pool.from_cidrs(
            group.ipv6_pool_cidrs, group.ipv6_subnet_prefixlen,
            "ipv6_pool_cidrs", "ipv6_subnet_prefixlen", version=6)
    return pools
