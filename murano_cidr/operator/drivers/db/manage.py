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

"""``murano-cidr-manage db``: create and upgrade the ``db`` driver's tables.

Usage::

    murano-cidr-manage [--config-file murano.conf] db sync [REVISION]
    murano-cidr-manage [--config-file murano.conf] db version
    murano-cidr-manage [--config-file murano.conf] db stamp REVISION

The database is ``[cidr_allocator_database] connection`` (unset: the SQLite
file under ``[cidr_allocator] state_path``). ``db sync`` creates that file
and its directory; ``db version`` (like ``murano-cidr-status upgrade
check``) only reads, and reports a file that does not exist as a database
without tables, creating nothing.
"""

from oslo_log import log as logging

from murano_cidr.engine.drivers.db import connection
from murano_cidr import messages
from murano_cidr.operator import confutils
from murano_cidr.operator.drivers.db import migration
from murano_cidr.operator.drivers.db import revisions

LOG = logging.getLogger(__name__)


def _announce(conf):
    # One line at INFO (--verbose) names the configuration files read and
    # the database (no password), as the commands of murano-cidr do.
    LOG.info("Configuration: %s; driver db, database %s",
             confutils.used_files(conf),
             messages.safe_url(connection.connection_url(conf)))


def _describe(conf, revision):
    url = messages.safe_url(connection.connection_url(conf))
    if revision is None:
        return "%s has no murano-cidr tables" % url
    head = revisions.head_revision()
    return "%s is at revision %s%s" % (
        url, revision, " (head)" if revision == head else
        " (head is %s)" % head)


def do_db_sync(conf):
    """Create or upgrade the tables to a revision (``head`` by default)."""
    _announce(conf)
    migration.upgrade(conf, conf.command.revision)
    print(_describe(conf, migration.current_revision(conf)))


def do_db_version(conf):
    """Print the schema revision, or ``None`` without tables."""
    _announce(conf)
    print(migration.current_revision(conf))


def do_db_stamp(conf):
    """Record a revision without running any migration."""
    _announce(conf)
    migration.stamp(conf, conf.command.revision)
    print(_describe(conf, migration.current_revision(conf)))


def add_command_parsers(subparsers):
    """Add the ``db`` commands to ``murano-cidr-manage``.

    :param subparsers: the ``argparse`` sub-parsers of the command line.
    """
    db = subparsers.add_parser(
        "db", help="the db driver's tables",
        description="Create, upgrade and inspect the db driver's tables.")
    commands = db.add_subparsers(title="db commands", dest="db_command")
    commands.required = True

    sync = commands.add_parser(
        "sync", help="create or upgrade the tables (run it before the db "
        "driver is used, and after every upgrade of murano-cidr)")
    sync.add_argument("revision", nargs="?", default="head",
                      help="target revision (default: head)")
    sync.set_defaults(action=do_db_sync)

    version = commands.add_parser(
        "version", help="print the schema revision (None: no tables)")
    version.set_defaults(action=do_db_version)

    stamp = commands.add_parser(
        "stamp", help="record a revision without running migrations")
    stamp.add_argument("revision", help="a revision, or head")
    stamp.set_defaults(action=do_db_stamp)
