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

"""The options every driver reads.

They live in ``[cidr_allocator]``: which driver, where its state goes, and
the pool; ``reservation_timeout`` is defined here too, once, for the
drivers that list it (``db`` and ``lock``). A driver's own options are
defined in its package, which lists them under the :data:`OPTS_NAMESPACE`
entry point namespace (by the driver's name);
:func:`murano_cidr.operator.drivers.commands.list_opts` gathers them all from
there, so the sample configuration and the documentation show every
option, and this module imports no driver.
"""

import os

from oslo_config import cfg

from murano_cidr._i18n import _

GROUP = "cidr_allocator"

#: The entry point namespace where each driver's package lists its options:
#: the driver's name, and a function returning ``(group, [options])``
#: pairs, as ``list_opts()`` functions do.
OPTS_NAMESPACE = "murano_cidr.allocator_opts"

cidr_allocator_group = cfg.OptGroup(
    GROUP,
    title="CIDR allocator options",
    help=_("How subnet CIDRs are picked for new Murano environments."))


def default_state_path():
    """Return the default state directory: writable by a non-root user.

    ``$XDG_STATE_HOME/murano-cidr``, or ``~/.local/state/murano-cidr``.
    """
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "murano-cidr")


#: Murano's own option group, whose pool options are read as deprecated
#: fallbacks. Murano registers it; this library never does.
MURANO_GROUP = "networking"


def _murano(name):
    # NOTE: a deprecated name is looked up in the parsed configuration
    # files, whoever registered (or did not register) its group, so the
    # engine's murano.conf keeps working without a [cidr_allocator] copy.
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


#: The default of ``reservation_timeout``: two hours, twice Heat's default
#: stack timeout.
DEFAULT_RESERVATION_TIMEOUT = 7200

#: Read by the drivers that hold reservations (``db`` and ``lock``), each
#: of which lists it among its own options: one definition, one meaning.
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
    """Return the ``[cidr_allocator]`` options every driver reads.

    :returns: a new list of :class:`oslo_config.cfg.Opt`: the driver and
        pool options (a driver's own are its ``list_opts()``).
    """
    return driver_opts + pool_opts


def state_path(conf):
    """Return ``[cidr_allocator] state_path``, expanded and absolute.

    :param conf: a configuration object with the options registered.
    """
    return os.path.abspath(os.path.expanduser(conf[GROUP].state_path))


def register_common_opts(conf):
    """Register the options every driver reads on ``conf``.

    A driver registers its own besides when it is built (its
    ``register_opts`` hook). Safe to call more than once on the same
    configuration object.

    :param conf: an :class:`oslo_config.cfg.ConfigOpts`.
    """
    conf.register_group(_fresh(cidr_allocator_group))
    conf.register_opts(all_opts(), group=GROUP)


def register_listed(conf, listed):
    """Register options given as ``list_opts()`` returns them.

    Safe to call more than once on the same configuration object.

    :param conf: an :class:`oslo_config.cfg.ConfigOpts`.
    :param listed: ``(group, [options])`` pairs; a group is an
        :class:`oslo_config.cfg.OptGroup` or its name.
    """
    for group, group_opts in listed:
        if isinstance(group, cfg.OptGroup):
            conf.register_group(_fresh(group))
            group = group.name
        conf.register_opts(group_opts, group=group)


def _fresh(group):
    # NOTE: ConfigOpts.register_group keeps a shallow copy of the group it
    # is given, whose table of options (and their overrides) is the given
    # object's own: registering a module-level group would share option
    # values between every ConfigOpts in the process.
    return cfg.OptGroup(group.name, title=group.title, help=group.help)
