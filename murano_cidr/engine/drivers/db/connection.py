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

"""Where the allocation database is, and how its sessions behave.

The URL comes from ``[cidr_allocator_database] connection``, or is the
embedded SQLite file under ``state_path``; each new engine gets the
session settings the driver's queries rely on.
"""

import logging
import os
import sys
import time

import sqlalchemy as sa

from murano_cidr.engine.drivers.db import compat
from murano_cidr.engine.drivers.db import options as db_options
from murano_cidr import opts

#: The file of the embedded default database, under ``state_path``.
SQLITE_FILE = "murano-cidr.sqlite"


def connection_url(conf):
    """Return the configured database URL, or the embedded default.

    The default is an SQLite file under ``[cidr_allocator] state_path``
    (its directory is made on first use, not here).

    :param conf: a configuration with the ``db`` driver's options
        registered.
    :returns: the URL, as a string.
    """
    url = conf[db_options.GROUP].connection
    if url:
        return url
    return "sqlite:///" + os.path.join(opts.state_path(conf), SQLITE_FILE)


def connect_url(url, connection_parameters, group):
    """Return the URL to connect to, and murano-cidr's own read timeout.

    A database on a server gets the defaults that bound its network waits
    (:mod:`murano_cidr.engine.drivers.db.timeouts`); SQLite the URL's query,
    ``connection_parameters`` and ``check_same_thread=false``.

    :param url: the configured URL (a string).
    :param connection_parameters: ``param1=value1&param2=value2``, or
        empty.
    :param group: the option group, for messages.
    :returns: ``(url, seconds)``: the URL as a string, password included,
        and the seconds PostgreSQL's watchdog waits (None otherwise).
    :raises murano_cidr.exceptions.InvalidConfig: for bad parameters.
    """
    parsed = sa.engine.url.make_url(url)
    server = parsed.get_backend_name() != "sqlite"
    given = {}
    if connection_parameters:
        from murano_cidr.engine.drivers.db import parameters
        given = parameters.parsed(connection_parameters, group)
    if server:
        from murano_cidr.engine.drivers.db import timeouts
        return timeouts.merged_url(url, given, group)
    # One connection serves this process's writers, one at a time, from any
    # thread (sqlite_writer); ":memory:" named: 1.3 parses "sqlite://?q=1"
    # as a host.
    query = {**parsed.query, **given, "check_same_thread": "false"}
    return compat.url_string(parsed, query=query,
                             database=parsed.database or ":memory:"), None


def facade_settings(group, url):
    """Return the settings of the driver's own oslo.db enginefacade.

    Everything is set here, so nothing is read from the global
    ``[database]`` group of the service this library lives in.

    :param group: the ``[cidr_allocator_database]`` option group.
    :param url: the URL to connect to, with its parameters.
    :returns: a dict for ``enginefacade.transaction_context().configure``.
    """
    return {
        "connection": url,
        "slave_connection": None,
        "asyncio_connection": None,
        "asyncio_slave_connection": None,
        "sqlite_fk": False,
        "mysql_sql_mode": group.mysql_sql_mode or None,
        "mysql_wsrep_sync_wait": None,
        "connection_recycle_time": group.connection_recycle_time,
        "connection_debug": _sql_logging(group.connection_debug),
        "max_pool_size": group.max_pool_size,
        "max_overflow": group.max_overflow,
        "pool_timeout": group.pool_timeout,
        "sqlite_synchronous": group.sqlite_synchronous,
        "connection_trace": group.connection_trace,
        "connection_parameters": None,
        # NOTE: oslo.db would try the first connection when it builds
        # the engine, max_retries times retry_interval seconds apart,
        # whatever call_timeout is; wait_for_connection does it within
        # the call's deadline instead (api.Database.wait_for_connection).
        "max_retries": 0,
        "retry_interval": group.retry_interval,
        # NOTE: oslo.db's yield at each check-in is a trip through the
        # OS scheduler outside eventlet (a millisecond on a busy host);
        # fewer_round_trips yields under eventlet only.
        "thread_checkin": False,
        "json_serializer": None,
        "json_deserializer": None,
        "logging_name": None,
        "expire_on_commit": False,
        "synchronous_reader": True,
    }


def _sql_logging(connection_debug):
    # NOTE: oslo.db sets the level of the process-wide sqlalchemy.engine
    # logger for every connection_debug of 0 or more. Where the host
    # process set that level (Murano's own connection_debug), 0 keeps it,
    # so SQL logging the operator turned on stays on; -1 tells oslo.db to
    # leave the logger alone.
    if connection_debug == 0 and logging.getLogger(
            "sqlalchemy.engine").level != logging.NOTSET:
        return -1
    return connection_debug


def yield_if_green(*args):
    """Yield to other green threads, in a process eventlet patched only."""
    # NOTE: eventlet is never imported here; a process it has not
    # monkey-patched has no green thread to yield to.
    eventlet = sys.modules.get("eventlet")
    if eventlet is not None and eventlet.patcher.is_monkey_patched("thread"):
        time.sleep(0)


def fewer_round_trips(engine):
    """Yield to other green threads at check-in only under eventlet.

    (oslo.db's ``thread_checkin`` yields to the OS scheduler anywhere;
    the round trips oslo.db's pool still makes:
    ``doc/source/contributor/drivers.rst``.)

    :param engine: a new SQLAlchemy engine (enginefacade's hook).
    """
    sa.event.listen(engine, "checkin", yield_if_green)
