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

"""Where the allocation database is, and what its dialect adds.

The URL is ``[cidr_allocator_database] connection`` or the embedded SQLite
file; what one database needs beyond SQLAlchemy (its default parameters,
session settings, faults) is a :class:`Dialect` plugin of the
``murano_cidr.db_dialects`` entry points, loaded by the URL's backend.
"""

import logging
import os
import sys
import time
from urllib import parse

import sqlalchemy as sa
from stevedore import driver as stevedore_driver
from stevedore import exception as stevedore_exc

from murano_cidr.engine.drivers.db import compat
from murano_cidr.engine.drivers.db import errors
from murano_cidr.engine.drivers.db import options as db_options
from murano_cidr import exceptions
from murano_cidr import opts

#: The file of the embedded default database, under ``state_path``.
SQLITE_FILE = "murano-cidr.sqlite"
#: The entry point namespace of the dialect plugins, by backend name.
DIALECTS = "murano_cidr.db_dialects"
#: Parameters whose value must be a whole number.
INTEGERS = frozenset(("connect_timeout", "read_timeout", "write_timeout",
                      "keepalives", "keepalives_idle", "keepalives_interval",
                      "keepalives_count", "tcp_user_timeout"))


def connection_url(conf):
    """Return the configured database URL, or the embedded SQLite file's."""
    url = conf[db_options.GROUP].connection
    if url:
        return url
    return "sqlite:///" + os.path.join(opts.state_path(conf), SQLITE_FILE)


def dialect(url):
    """Return the :class:`Dialect` of a parsed URL's backend (or the base)."""
    try:
        return stevedore_driver.DriverManager(
            DIALECTS, url.get_backend_name()).driver()
    except stevedore_exc.NoMatches:
        return Dialect()


class Dialect(object):
    """What one database needs beyond SQLAlchemy; the base does nothing."""

    #: Retries of an attempt :meth:`busy` names, within the deadline.
    busy_retries = 0

    def defaults(self, url):
        """Return the default connection parameters of ``url`` (a dict)."""
        return {}

    def connect_url(self, url, given, group):
        """Return the URL to connect to, and a read timeout (or None).

        :meth:`defaults`, the URL's query, then ``given`` (the parsed
        ``connection_parameters``) win, key by key.

        :raises murano_cidr.exceptions.InvalidConfig: for a bad value.
        """
        query = self.defaults(url)
        query.update(url.query)
        query.update(given)
        for name in INTEGERS.intersection(query):
            value = query[name]
            if not (isinstance(value, str) and value.isdigit()):
                raise exceptions.InvalidConfig(
                    group=group, option="connection_parameters",
                    reason="%s=%s is not a whole number" % (name, value))
        self.check(url, query, group)
        seconds = self.read_timeout(query)
        return compat.url_string(url, query=query), seconds

    def check(self, url, query, group):
        """Refuse parameters this database's driver would misread."""

    def read_timeout(self, query):
        """Take murano-cidr's own read timeout out of ``query``, or None."""
        return None

    def engine_created(self, engine, seconds):
        """Set a new engine's session up (enginefacade's hook)."""

    def writer(self, url, safe_url, call_timeout):
        """Return what lets this process's writers take turns, or None."""
        return None

    def prepare(self, directory):
        """Make the directory of the default database file, if any."""

    def missing(self, url, safe_url, creatable):
        """Return the error of a database ``db sync`` has not made, or None."""
        return None

    def busy(self, error):
        """Tell whether ``error`` says another process holds the database."""
        return False

    def lost(self, error):
        """Tell whether ``error`` is a lost connection oslo.db missed."""
        return False

    def refused(self, error):
        """Say why the server refused the configuration, or None."""
        return None

    def diagnose(self, url, safe_url, error, creatable):
        """Return the error that names the cause of ``error``, or None.

        The base: an InvalidConfig if the server refused the configuration.
        """
        why = errors.reason(self, error)
        return None if why is None else errors.invalid_url(safe_url, why)


def parsed_parameters(text, group):
    """Parse ``connection_parameters`` (``a=1&b=2``) into a dict.

    :raises murano_cidr.exceptions.InvalidConfig: if unparsable, a name is
        given twice or has no value.
    """
    if not text:
        return {}
    try:
        pairs = parse.parse_qsl(text, keep_blank_values=True,
                                strict_parsing=True)
    except ValueError as e:
        raise exceptions.InvalidConfig(
            group=group, option="connection_parameters",
            reason="%r is not param1=value1&param2=value2 (%s)" % (text, e))
    names = [name for name, _ in pairs]
    for name, value in pairs:
        why = ("is given twice" if names.count(name) > 1
               else None if value else "has no value")
        if why:
            raise exceptions.InvalidConfig(
                group=group, option="connection_parameters",
                reason="%s %s" % (name, why))
    return dict(pairs)


def connect_url(url, connection_parameters, group):
    """Return the URL to connect to, and murano-cidr's own read timeout.

    :param url: the configured URL (a string).
    :param connection_parameters: ``param1=value1&param2=value2``, or "".
    :raises murano_cidr.exceptions.InvalidConfig: for bad parameters.
    """
    parsed = sa.engine.url.make_url(url)
    return dialect(parsed).connect_url(
        parsed, parsed_parameters(connection_parameters, group), group)


def facade_settings(group, url):
    """Return the settings of the driver's own enginefacade, all of them.

    (So nothing comes from the host's ``[database]``.)
    """
    return {
        "connection": url, "slave_connection": None,
        "asyncio_connection": None, "asyncio_slave_connection": None,
        "sqlite_fk": False, "mysql_sql_mode": group.mysql_sql_mode or None,
        "mysql_wsrep_sync_wait": None,
        "connection_recycle_time": group.connection_recycle_time,
        "connection_debug": _sql_logging(group.connection_debug),
        "max_pool_size": group.max_pool_size,
        "max_overflow": group.max_overflow,
        "pool_timeout": group.pool_timeout,
        "sqlite_synchronous": group.sqlite_synchronous,
        "connection_trace": group.connection_trace,
        "connection_parameters": None,
        # NOTE: the first connection is tried within the call's deadline
        # (api.Database.wait_for_connection), not by oslo.db.
        "max_retries": 0, "retry_interval": group.retry_interval,
        # NOTE: fewer_round_trips yields at check-in under eventlet only.
        "thread_checkin": False,
        "json_serializer": None, "json_deserializer": None,
        "logging_name": None, "expire_on_commit": False,
        "synchronous_reader": True,
    }


def _sql_logging(connection_debug):
    # NOTE: oslo.db sets the process-wide sqlalchemy.engine logger's level
    # for any connection_debug >= 0; -1 leaves the level the host set.
    if connection_debug == 0 and logging.getLogger(
            "sqlalchemy.engine").level != logging.NOTSET:
        return -1
    return connection_debug


def yield_if_green(*args):
    """Yield to other green threads, in a process eventlet patched only."""
    eventlet = sys.modules.get("eventlet")
    if eventlet is not None and eventlet.patcher.is_monkey_patched("thread"):
        time.sleep(0)


def fewer_round_trips(engine):
    """Yield to green threads at check-in, under eventlet only (a hook)."""
    sa.event.listen(engine, "checkin", yield_if_green)
