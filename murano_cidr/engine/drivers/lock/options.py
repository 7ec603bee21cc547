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

"""The options of the ``lock`` driver, in ``[cidr_allocator]``.

The file locks' directory is ``[oslo_concurrency] lock_path``.
"""

import copy
import os

from oslo_concurrency import lockutils
from oslo_concurrency import opts as concurrency_opts
from oslo_config import cfg

from murano_cidr._i18n import _
from murano_cidr import opts

lock_opts = [
    cfg.StrOpt(
        "coordination_url",
        secret=True,
        help=_("Lock service of the 'lock' driver, as a tooz backend URL: "
               "redis://[:password@]host:6379 (extra 'redis'; add "
               "?sentinel=<master> for Redis Sentinel), "
               "etcd3+http://host:2379 (extra 'etcd'; name every member "
               "of a cluster: etcd3+http://h1:2379,h2:2379,h3:2379), "
               "zookeeper://host:2181 (extra 'zookeeper') or "
               "file:///path (one host). It keeps the reservation records. "
               "Unset: oslo.concurrency file locks and record files under "
               "[oslo_concurrency] lock_path, or $state_path/locks when "
               "that is unset; they protect the engines of one host "
               "only.")),
    cfg.IntOpt(
        "lock_timeout",
        default=30,
        min=1,
        help=_("Seconds a tooz lock (the scope lock, ZooKeeper and "
               "file:// only) survives without a heartbeat. Passed to the "
               "backend as lock_timeout (ZooKeeper: the session timeout) "
               "unless coordination_url sets its own. Reservations are "
               "records that live reservation_timeout, whatever their "
               "engine's session does. It also bounds every call to the "
               "lock service: a Redis or "
               "etcd request waits at most half of it (Redis "
               "socket_timeout and socket_connect_timeout, etcd timeout, "
               "unless coordination_url sets them), so allocate and "
               "confirm fail within about lock_timeout while the service "
               "does not answer; ZooKeeper's requests are retried for at "
               "most lock_timeout.")),
    cfg.IntOpt(
        "lock_wait_timeout",
        default=60,
        min=1,
        help=_("Seconds the 'lock' driver waits for another engine to "
               "finish picking a CIDR in the same scope before allocate "
               "fails with a 'lock service unavailable' error, counted "
               "from the start of allocate. ZooKeeper "
               "and tooz's file backend only: on etcd and Redis engines "
               "pick without waiting for each other (their reservation "
               "records keep them apart), and oslo.concurrency file locks "
               "wait for their holder.")),
    cfg.IntOpt(
        "reservation_prefixlen",
        default=24,
        min=8,
        max=30,
        help=_("The 'lock' driver reserves a CIDR with a record on every "
               "aligned IPv4 block of this prefix length that the CIDR "
               "covers (a /23 takes two /24 records; a /26 the /24 it sits "
               "in), so "
               "engines whose subnet sizes differ, as during a change of "
               "max_hosts or subnet_prefixlen, still exclude each other. "
               "Every engine must use the same value. A subnet may cover at "
               "most 256 blocks.")),
    cfg.IntOpt(
        "ipv6_reservation_prefixlen",
        default=64,
        min=8,
        max=126,
        help=_("The same as reservation_prefixlen, for IPv6 subnets.")),
    opts.reservation_timeout_opt,
]


def list_opts():
    """Return the ``lock`` driver's options, as ``list_opts()`` hooks do.

    :returns: a list of ``(group, [options])`` pairs.
    """
    return ([(opts.cidr_allocator_group, copy.deepcopy(lock_opts))]
            + concurrency_opts.list_opts())


def lock_path(conf):
    """Return the directory of the file locks.

    ``[oslo_concurrency] lock_path`` if set, else ``<state_path>/locks``.

    :param conf: a configuration object with the ``lock`` driver's options
        registered.
    :returns: an absolute path.
    """
    path = lockutils.get_lock_path(conf)
    if not path:
        path = os.path.join(opts.state_path(conf), "locks")
    return os.path.abspath(os.path.expanduser(path))
