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

"""The ``[cidr_allocator]`` options every driver reads.

A driver's own options are in its package, listed under the
:data:`OPTS_NAMESPACE` entry points; this module imports no driver.
"""

import os

from oslo_config import cfg

from murano_cidr._i18n import _

GROUP = "cidr_allocator"

#: Where each driver's package lists its options (a ``list_opts()``).
OPTS_NAMESPACE = "murano_cidr.allocator_opts"

cidr_allocator_group = cfg.OptGroup(
    GROUP,
    title="CIDR allocator options",
    help=_("How subnet CIDRs are picked for new Murano environments."))


def default_state_path():
    """Return ``$XDG_STATE_HOME/murano-cidr`` or its default under ``~``."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "murano-cidr")


#: Murano's option group, whose pool options are deprecated fallbacks.
MURANO_GROUP = "networking"


def _murano(name):
    # NOTE: read from the files whoever registers [networking].
    return cfg.DeprecatedOpt(name, group=MURANO_GROUP)


driver_opts = [
    cfg.StrOpt(
        "driver",
        default="db",
        help=_("The allocator driver, by its name in the "
               "'murano_cidr.allocators' entry point namespace. 'db' "
               "records every allocation in an SQL database whose "
               "constraints make overlaps within a scope impossible (run "
               "'murano-cidr-manage db sync' first; the default database is "
               "an SQLite file under state_path, see "
               "[cidr_allocator_database]); 'lock' serialises picks with an "
               "external lock; 'random' picks uniformly at random among free "
               "subnets (fewer collisions, never zero, nothing to set up); "
               "'legacy' is Murano's original hash-and-probe pick.")),
    cfg.StrOpt(
        "state_path",
        default=default_state_path(),
        sample_default="~/.local/state/murano-cidr",
        help=_("Directory for the allocator's local state (the embedded "
               "SQLite database, file locks); a leading ~ is expanded. "
               "Defaults to murano-cidr under the XDG_STATE_HOME "
               "environment variable, or ~/.local/state/murano-cidr when "
               "it is not set.")),
]

pool_opts = [
    cfg.StrOpt(
        "env_ip_template",
        default="10.0.0.0",
        deprecated_opts=[_murano("env_ip_template")],
        help=_("Template IPv4 address of the pool, with Murano's meaning: "
               "subnets are carved under it from max_environments and "
               "max_hosts. Ignored when pool_cidrs is set. Unset here, "
               "Murano's [networking] env_ip_template is read (deprecated: "
               "set it here).")),
    cfg.IntOpt(
        "max_environments",
        default=250,
        deprecated_opts=[_murano("max_environments")],
        help=_("Number of environments the IPv4 pool must hold: the pool "
               "has 2**ceil(log2(max_environments)) subnets. 250, as in "
               "Murano since Liberty, gives 256 subnets (Murano's Kilo "
               "default of 20 gave 32). Unset here, Murano's [networking] "
               "max_environments is read (deprecated: set it here).")),
    cfg.IntOpt(
        "max_hosts",
        default=250,
        deprecated_opts=[_murano("max_hosts")],
        help=_("Number of hosts each IPv4 subnet must hold: subnets have "
               "ceil(log2(max_hosts)) host bits (250 gives /24). Unset here, "
               "Murano's [networking] max_hosts is read (deprecated: set it "
               "here).")),
    cfg.ListOpt(
        "pool_cidrs",
        default=[],
        help=_("Explicit IPv4 pool: networks (non-overlapping, in the order "
               "candidates are numbered) to carve subnets from. When set, "
               "env_ip_template and max_environments are ignored.")),
    cfg.IntOpt(
        "subnet_prefixlen",
        help=_("Prefix length of the subnets carved from pool_cidrs. "
               "Unset: derived from max_hosts, as Murano does.")),
    cfg.ListOpt(
        "ipv6_pool_cidrs",
        default=[],
        help=_("IPv6 pool: networks to carve IPv6 subnets from. Empty: "
               "no IPv6 subnets are allocated.")),
    cfg.IntOpt(
        "ipv6_subnet_prefixlen",
        default=64,
        help=_("Prefix length of the subnets carved from ipv6_pool_cidrs.")),
]


#: Two hours, twice Heat's default stack timeout.
DEFAULT_RESERVATION_TIMEOUT = 7200

#: Listed by the drivers that hold reservations (``db`` and ``lock``).
reservation_timeout_opt = cfg.IntOpt(
    "reservation_timeout",
    default=DEFAULT_RESERVATION_TIMEOUT,
    min=1,
    help=_("Seconds after which a reservation never confirmed (its "
           "deployment failed, or its engine died, between picking the "
           "CIDR and creating the subnet) stops keeping its CIDR from other "
           "engines. 'db': a later allocation in its scope (router) may "
           "reclaim it, by the database server's clock. 'lock': its record "
           "in the lock service (a file beside the file locks, a Redis or "
           "etcd key, a ZooKeeper znode) expires, whether or not its engine "
           "runs (a delete of the deployment, in any engine process, frees "
           "it at once). Either way the CIDR is handed out again only by an "
           "allocation that reads the router's subnets and finds nothing "
           "overlapping it. An engine confirms once Heat has created the "
           "subnet, so this must be longer than any stack create, with its "
           "retries (Heat's stack timeout defaults to an hour): an engine "
           "slower than that may find its CIDR handed out again, and "
           "Neutron refuse its subnet."))


def all_opts():
    """Return a new list of the options every driver reads."""
    return driver_opts + pool_opts


def state_path(conf):
    """Return ``[cidr_allocator] state_path`` (registered), absolute."""
    return os.path.abspath(os.path.expanduser(conf[GROUP].state_path))


def register_common_opts(conf):
    """Register the options every driver reads on ``conf``; idempotent."""
    conf.register_group(_fresh(cidr_allocator_group))
    conf.register_opts(all_opts(), group=GROUP)


def register_listed(conf, listed):
    """Register ``(group, [options])`` pairs on ``conf``; idempotent."""
    for group, group_opts in listed:
        if isinstance(group, cfg.OptGroup):
            conf.register_group(_fresh(group))
            group = group.name
        conf.register_opts(group_opts, group=group)


def _fresh(group):
    # NOTE: register_group copies the group shallowly: a module-level one
    # would share option values between every ConfigOpts.
    return cfg.OptGroup(group.name, title=group.title, help=group.help)
