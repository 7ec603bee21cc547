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

"""Every option murano-cidr reads, and ``list_opts()`` for the generator.

The allocator's options live in ``[cidr_allocator]``; a driver's own options
are defined here too, so the sample configuration and the documentation show
them all.
"""

import copy
import os

from oslo_concurrency import opts as concurrency_opts
from oslo_config import cfg

from murano_cidr._i18n import _

GROUP = "cidr_allocator"

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


lock_opts = [
    cfg.StrOpt(
        "coordination_url",
        secret=True,
        help=_("Lock service of the 'lock' driver, as a tooz backend URL: "
               "redis://[:password@]host:6379 (extra 'redis'; add "
               "?sentinel=<master> for Redis Sentinel), "
               "etcd3+http://host:2379 (extra 'etcd'), "
               "zookeeper://host:2181 (extra 'zookeeper') or "
               "file:///path (one host). Unset: oslo.concurrency file locks "
               "under [oslo_concurrency] lock_path, or $state_path/locks "
               "when that is unset; they protect the engines of one host "
               "only.")),
    cfg.IntOpt(
        "lock_timeout",
        default=30,
        min=1,
        help=_("Seconds a tooz lock survives without a heartbeat: how long "
               "the reservations of an engine that died stay blocked, and "
               "how long a live engine may stall before it loses them. "
               "Passed to the backend as lock_timeout (ZooKeeper: the "
               "session timeout) unless coordination_url sets its own. "
               "File locks need none: the kernel frees them at once.")),
    cfg.IntOpt(
        "lock_wait_timeout",
        default=60,
        min=1,
        help=_("Seconds the 'lock' driver waits for another engine to "
               "finish picking a CIDR in the same scope before allocate "
               "fails with a 'lock service unavailable' error (tooz "
               "backends only; file locks wait for their holder).")),
    cfg.IntOpt(
        "reservation_prefixlen",
        default=24,
        min=8,
        max=30,
        help=_("The 'lock' driver reserves a CIDR by locking every aligned "
               "IPv4 block of this prefix length that the CIDR covers (a "
               "/23 takes two /24 locks; a /26 locks the /24 it sits in), so "
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
]


DATABASE_GROUP = "cidr_allocator_database"

#: The first-connection retries of the console scripts, which an operator
#: waits for: they replace the defaults of ``max_retries`` and
#: ``retry_interval`` (see :func:`set_command_defaults`).
COMMAND_MAX_RETRIES = 2
COMMAND_RETRY_INTERVAL = 1

database_group = cfg.OptGroup(
    DATABASE_GROUP,
    title="CIDR allocator database options",
    help=_("The SQL database of the 'db' driver. Its tables (named "
           "murano_cidr_*) and its own alembic version table "
           "(murano_cidr_alembic_version) may live in another service's "
           "database. Create or upgrade them with 'murano-cidr-manage db "
           "sync'."))

database_opts = [
    cfg.StrOpt(
        "connection",
        secret=True,
        help=_("SQLAlchemy URL of the allocation database, e.g. "
               "mysql+pymysql://user:password@host/murano?charset=utf8mb4 "
               "(extra 'mysql') or postgresql+psycopg2://user:password@host/"
               "murano (extra 'postgresql'). Unset: an SQLite file "
               "murano-cidr.sqlite under [cidr_allocator] state_path, which "
               "serves one host only.")),
    cfg.StrOpt(
        "connection_parameters",
        default="",
        help=_("Extra parameters appended to the connection URL's query "
               "string, as param1=value1&param2=value2.")),
    cfg.BoolOpt(
        "sqlite_synchronous",
        default=True,
        help=_("Whether SQLite waits for each write to reach the disk.")),
    cfg.StrOpt(
        "mysql_sql_mode",
        default="TRADITIONAL",
        help=_("SQL mode of MySQL/MariaDB sessions; empty for the server's "
               "default.")),
    cfg.IntOpt(
        "connection_recycle_time",
        default=3600,
        min=1,
        help=_("Seconds after which a pooled connection is replaced.")),
    cfg.IntOpt(
        "max_pool_size",
        default=5,
        min=0,
        help=_("Connections kept open in the pool; 0 for no limit.")),
    cfg.IntOpt(
        "max_overflow",
        default=50,
        min=0,
        help=_("Connections opened beyond max_pool_size under load.")),
    cfg.IntOpt(
        "pool_timeout",
        min=1,
        help=_("Seconds to wait for a pooled connection; unset for "
               "SQLAlchemy's default.")),
    cfg.IntOpt(
        "connection_debug",
        default=0,
        min=0,
        max=100,
        help=_("SQL logging: 0 none, 50 statements, 100 statements and "
               "results.")),
    cfg.BoolOpt(
        "connection_trace",
        default=False,
        help=_("Add Python stack traces to SQL statements as comments.")),
    cfg.IntOpt(
        "max_retries",
        default=10,
        min=0,
        help=_("How often the first connection of a process is retried "
               "when the database does not answer (oslo.db's option of the "
               "same name, with its default; unlike oslo.db's, -1 is not "
               "accepted). Each wait is logged with the database's URL. "
               "The murano-cidr commands default to "
               "%(retries)d retries, %(interval)d s apart, so that an "
               "unreachable database fails them within seconds; set it "
               "here to change that too.")
        % {"retries": COMMAND_MAX_RETRIES,
           "interval": COMMAND_RETRY_INTERVAL}),
    cfg.IntOpt(
        "retry_interval",
        default=10,
        min=0,
        help=_("Seconds between two attempts of that first connection "
               "(oslo.db's option of the same name, with its default).")),
    cfg.IntOpt(
        "db_max_retries",
        default=20,
        min=0,
        help=_("How often one operation is retried after it lost a race to "
               "another allocator, hit a deadlock or lost its connection, "
               "with a growing, randomised pause, before it fails with a "
               "'database unavailable' error.")),
]


def all_opts():
    """Return every ``[cidr_allocator]`` option.

    :returns: a new list of :class:`oslo_config.cfg.Opt`: the driver, pool
        and lock options.
    """
    return driver_opts + pool_opts + lock_opts


def state_path(conf):
    """Return ``[cidr_allocator] state_path``, expanded and absolute.

    :param conf: a configuration object with the options registered.
    """
    return os.path.abspath(os.path.expanduser(conf[GROUP].state_path))


def register_opts(conf):
    """Register every ``[cidr_allocator]`` and database option on ``conf``.

    Safe to call more than once on the same configuration object.

    :param conf: an :class:`oslo_config.cfg.ConfigOpts`.
    """
    conf.register_group(_fresh(cidr_allocator_group))
    conf.register_opts(all_opts(), group=GROUP)
    for group, group_opts in concurrency_opts.list_opts():
        conf.register_opts(group_opts, group=group)
    conf.register_group(_fresh(database_group))
    conf.register_opts(database_opts, group=DATABASE_GROUP)


def set_command_defaults(conf):
    """Give a console script a shorter wait for an unreachable database.

    The options are registered first; values from the configuration files
    still win.

    :param conf: an :class:`oslo_config.cfg.ConfigOpts`.
    """
    register_opts(conf)
    conf.set_default("max_retries", COMMAND_MAX_RETRIES, group=DATABASE_GROUP)
    conf.set_default("retry_interval", COMMAND_RETRY_INTERVAL,
                     group=DATABASE_GROUP)


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


def list_opts():
    """Return the options for oslo-config-generator and the docs.

    :returns: a list of ``(group, [options])`` pairs.
    """
    return ([(cidr_allocator_group, copy.deepcopy(all_opts())),
             (database_group, copy.deepcopy(database_opts))]
            + concurrency_opts.list_opts())
