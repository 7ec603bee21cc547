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

"""The options of the ``db`` driver.

Its database in ``[cidr_allocator_database]``; how long a released CIDR is
held back, ``release_grace``, in ``[cidr_allocator]`` beside the pool's,
with ``reservation_timeout``, which the ``lock`` driver shares
(:data:`murano_cidr.opts.reservation_timeout_opt`).
"""

import copy

from oslo_config import cfg

from murano_cidr._i18n import _
from murano_cidr import opts

GROUP = "cidr_allocator_database"

#: The first-connection retries of the console scripts, which an operator
#: waits for: they replace the defaults of ``max_retries`` and
#: ``retry_interval`` (see ``DbCommands.command_defaults`` in
#: :mod:`murano_cidr.operator.drivers.db.commands`).
COMMAND_MAX_RETRIES = 2
COMMAND_RETRY_INTERVAL = 1

database_group = cfg.OptGroup(
    GROUP,
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
        help=_("Parameters of the connection, as "
               "param1=value1&param2=value2; each overrides the same "
               "parameter of the URL's query and of the defaults that bound "
               "every wait. Defaults for PostgreSQL (psycopg2): "
               "connect_timeout=5, keepalives=1, keepalives_idle=5, "
               "keepalives_interval=2, keepalives_count=3, "
               "tcp_user_timeout=10000 (ms; libpq 12 on), read_timeout=25 "
               "(murano-cidr's own: the longest wait for an answer, a "
               "stopped server included; not given to libpq), options=-c "
               "statement_timeout=20000 -c "
               "idle_in_transaction_session_timeout=15000. For MySQL and "
               "MariaDB (PyMySQL): charset=utf8mb4, connect_timeout=5, "
               "read_timeout=20, write_timeout=20, init_command=SET SESSION "
               "innodb_lock_wait_timeout = 18 (and, on MariaDB, "
               "idle_transaction_timeout = 15). See the administrator "
               "guide's 'Timeouts and partitions'.")),
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
        help=_("How often the first connection of a process is tried "
               "when the database does not answer (oslo.db's option of the "
               "same name, with its default; unlike oslo.db's, -1 is not "
               "accepted; 0 tries it once). The attempts are part of the "
               "first operation, and none starts after its call_timeout. "
               "The murano-cidr commands default to "
               "%(retries)d attempts, %(interval)d s apart, so that an "
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
        "call_timeout",
        default=30,
        min=1,
        help=_("Seconds after which an operation (allocate, confirm, "
               "release, get, list, ...) is no longer retried: it then "
               "fails with a 'database unavailable' error once its current "
               "attempt ends, which the connection parameters bound. The "
               "first operation of a process also tries the first "
               "connection again (max_retries, retry_interval) within it.")),
    cfg.IntOpt(
        "db_max_retries",
        default=20,
        min=0,
        help=_("How often one operation is retried after it lost a race to "
               "another allocator, hit a deadlock or lost its connection, "
               "with a growing, randomised pause, before it fails with a "
               "'database unavailable' error; no retry starts after "
               "call_timeout, and a connection that cannot be made is not "
               "retried. An SQLite file that another process keeps locked "
               "is tried again until call_timeout, however many retries "
               "that takes (none if this is 0).")),
]


#: The default of ``release_grace``: an hour, longer than Heat takes to
#: delete an environment's stack after Murano released its network.
DEFAULT_RELEASE_GRACE = 3600

release_opts = [
    cfg.IntOpt(
        "release_grace",
        default=DEFAULT_RELEASE_GRACE,
        min=0,
        help=_("Seconds a CIDR released by the 'db' driver stays out of the "
               "pool of its scope (router). A released CIDR is handed out "
               "again only once both hold: this long has passed since the "
               "release, and an allocation in its scope read the router's "
               "subnets (the 'taken' CIDRs, read while the scope is locked) "
               "and did not find it there (or 'murano-cidr reconcile' saw "
               "it gone). So a subnet left on the router after its network "
               "was released (a network removed from a live environment, a "
               "stack Heat has not deleted yet) keeps its CIDR for as long "
               "as the allocating engine sees it there, and one the engine "
               "cannot see (another project's, on a shared router) for at "
               "least this long. Make it longer than Heat takes to delete a "
               "stack. 0 frees a released CIDR at the first allocation "
               "after the release that does not see its subnet. Times are "
               "the database server's clock, not the engines'.")),
    opts.reservation_timeout_opt,
]


def list_opts():
    """Return the ``db`` driver's options, as ``list_opts()`` hooks do.

    :returns: a list of ``(group, [options])`` pairs.
    """
    return [(opts.cidr_allocator_group, copy.deepcopy(release_opts)),
            (database_group, copy.deepcopy(database_opts))]
