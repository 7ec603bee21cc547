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

"""Murano's original CIDR pick, restated as the oracle for our tests.

This is the algorithm of Murano's ``NetworkExplorer`` (candidate generation,
hash start, linear probe with a containment test against every taken
network), written out plainly so the pool and the ``legacy`` driver can be
compared with it. It is deliberately slow: ``O(pool x taken)``.
"""

import math

import netaddr


def candidates(env_ip_template, max_environments, max_hosts):
    """Return Murano's candidate list for its three options."""
    env_bits = int(math.ceil(math.log(max_environments, 2)))
    host_bits = int(math.ceil(math.log(max_hosts, 2)))
    subnet_len = 32 - host_bits
    parent = netaddr.IPNetwork(
        "%s/%d" % (env_ip_template, subnet_len - env_bits))
    return list(parent.subnet(subnet_len))


def _overlap(a, b):
    # One contains the other: how Murano tests two CIDRs.
    return a in b or b in a


def pick(available, taken, id_hash):
    """Murano's probe: the first candidate from ``id_hash`` not taken.

    :returns: the CIDR string, or None when every candidate is taken.
    """
    taken = [netaddr.IPNetwork(t) for t in taken]
    num_fails = 0
    while num_fails < len(available):
        cidr = available[(id_hash + num_fails) % len(available)]
        if any(_overlap(cidr, t) for t in taken):
            num_fails += 1
        else:
            return str(cidr)
    return None
