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

"""The allocation database: its engine, transactions, retries and errors.

:class:`Database`: an oslo.db ``enginefacade`` of its own, configured from
``[cidr_allocator_database]`` alone (never the host's ``[database]``),
whose transactions retry and whose errors are murano-cidr's
(:mod:`.errors`).
"""

import contextlib
import functools
import threading
import time
import warnings

from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
from oslo_db import warning as db_warning
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from murano_cidr.engine.drivers.db import connection
from murano_cidr.engine.drivers.db import errors
from murano_cidr.engine.drivers.db import options as db_options
from murano_cidr import exceptions
from murano_cidr import messages
from murano_cidr import opts

#: The first pause between two attempts, in seconds; it doubles (with
#: jitter) up to :data:`MAX_RETRY_INTERVAL`.
RETRY_INTERVAL = 0.01
MAX_RETRY_INTERVAL = 2.0  # so 20 retries span most of call_timeout


@enginefacade.transaction_context_provider
class _Context(object):
    """A context object for one operation (enginefacade needs one)."""


class Database(object):
    """The allocation database of one configuration (connects on first use).

    :param conf: a configuration with the ``db`` driver's options.
    :param schema_check: ``schema_check(connection, url)``, run once before
        the first transaction (:func:`.driver.check_schema`); None for none.
    :raises murano_cidr.exceptions.InvalidConfig: for a connection URL that
        cannot be parsed or names an unknown database.
    """

    def __init__(self, conf, schema_check=None):
        group = conf[db_options.GROUP]
        self._conf = conf
        self.url = connection.connection_url(conf)
        # The default SQLite file's directory (None for a set connection).
        self._directory = None if group.connection else opts.state_path(conf)
        self.safe_url = messages.safe_url(self.url)
        try:
            parsed = sa.engine.url.make_url(self.url)
            parsed.get_dialect()
        except (sa_exc.ArgumentError, sa_exc.NoSuchModuleError, ValueError,
                TypeError) as e:
            raise errors.unusable_url(self.safe_url, e)
        self.backend = parsed.get_backend_name()
        #: The :class:`~.connection.Dialect` plugin of the backend.
        self.dialect = connection.dialect(parsed)
        # Our bounded waits, then the URL's query and connection_parameters.
        url, read_timeout = self.dialect.connect_url(
            parsed, connection.parsed_parameters(
                group.connection_parameters, db_options.GROUP),
            db_options.GROUP)
        self.max_retries = group.db_max_retries
        self.call_timeout = group.call_timeout
        self.connect_retries = group.max_retries
        self.connect_interval = group.retry_interval
        self._schema_check = schema_check
        self._synced, self._connected = schema_check is None, False
        self._sync_lock = threading.Lock()
        self._writer = self.dialect.writer(self.url, self.safe_url,
                                           self.call_timeout)
        self._manager = enginefacade.transaction_context()
        with warnings.catch_warnings():
            # NOTE: older oslo.db releases do not know the asyncio keys;
            # they warn and ignore them, which is what we want.
            warnings.simplefilter("ignore", db_warning.NotSupportedWarning)
            self._manager.configure(
                **connection.facade_settings(group, url))
        self._manager.append_on_engine_create(connection.fewer_round_trips)
        self._manager.append_on_engine_create(functools.partial(
            self.dialect.engine_created, seconds=read_timeout))

    def _deadline(self):
        return time.monotonic() + self.call_timeout

    def _retry(self, func, deadline):
        """Run ``func(connected)`` with the retries of one call.

        ``func`` calls ``connected(True)`` once it holds a connection; what
        is retried is :func:`.errors.retriable`'s, a busy SQLite file until
        ``deadline`` (none if ``db_max_retries`` is 0).
        """
        connected = []

        def attempt():
            del connected[:]
            return func(connected.append)

        def retriable(error):
            return errors.retriable(self.dialect, error, bool(connected),
                                    deadline)

        policy = functools.partial(
            oslo_db_api.wrap_db_retry, retry_interval=RETRY_INTERVAL,
            inc_retry_interval=True, max_retry_interval=MAX_RETRY_INTERVAL,
            jitter=True)
        if self.dialect.busy_retries:  # a file another process writes
            attempt = policy(
                max_retries=self.max_retries and self.dialect.busy_retries,
                exception_checker=lambda e: self.dialect.busy(e)
                and time.monotonic() < deadline)(attempt)
        return policy(max_retries=self.max_retries,
                      exception_checker=retriable)(attempt)()

    @property
    def engine(self):
        """The SQLAlchemy engine (created on first use).

        :raises murano_cidr.exceptions.InvalidConfig: if the Python driver
            is missing, or the default file's directory cannot be made.
        """
        if self._directory is not None:  # the default SQLite file's
            self.dialect.prepare(self._directory)
            self._directory = None
        with self.translate_errors():
            return self._manager.writer.get_engine()

    @contextlib.contextmanager
    def translate_errors(self):
        """Turn database errors raised in the block into ours.

        The error is :func:`.errors.translate`'s; a hint in it names the
        files this process read (:func:`.messages.name_configuration`).
        """
        try:
            yield
        except exceptions.MuranoCidrException as e:
            raise self._name_configuration(e)
        except (ImportError, db_exc.DBError, sa_exc.SQLAlchemyError) as e:
            raise self._name_configuration(errors.translate(self, e))

    def _name_configuration(self, error):
        error.msg = messages.name_configuration(error.msg, self._conf)
        error.args = (error.msg,)
        return error

    def wait_for_connection(self, deadline=None):
        """Make the process's first connection, waiting for the database.

        At most ``max_retries`` attempts (once for 0), ``retry_interval``
        seconds apart, none after ``deadline``; at once once connected.

        :param deadline: a :func:`time.monotonic` time; None for
            ``call_timeout`` from now.
        :raises murano_cidr.exceptions.DatabaseUnavailable: if no attempt
            connects.
        """
        if self._connected:
            return
        if deadline is None:
            deadline = self._deadline()
        attempts = max(self.connect_retries, 1)
        failures = []

        def connect():
            with self.engine.connect():
                pass

        retrying = oslo_db_api.wrap_db_retry(
            max_retries=attempts, retry_interval=self.connect_interval,
            inc_retry_interval=False,
            exception_checker=lambda e: errors.connect_again(
                self, e, failures, attempts, deadline))
        with self.translate_errors():
            try:
                retrying(connect)()
            except (db_exc.DBError, sa_exc.DBAPIError) as e:
                if not errors.connection_failed(self.dialect, e):
                    raise
                raise errors.not_connected(self, e, len(failures))
        self._connected = True

    def ensure_synced(self, deadline=None):
        """Run the schema check once (see the constructor).

        :param deadline: as for :meth:`wait_for_connection`.
        :raises murano_cidr.exceptions.DatabaseNotSynced: if the tables are
            missing or older than this code.
        :raises murano_cidr.exceptions.DatabaseUnavailable: if unreachable.
        """
        if self._synced:
            return
        if deadline is None:
            deadline = self._deadline()
        with self._sync_lock:
            if self._synced:
                return
            missing = self.dialect.missing(self.url, self.safe_url,
                                           self._directory is not None)
            if missing is not None:
                raise self._name_configuration(missing)
            self.wait_for_connection(deadline)

            def attempt(connected):
                with self.engine.connect() as connection:
                    connected(True)
                    self._schema_check(connection, self.safe_url)

            with self.translate_errors():
                self._retry(attempt, deadline)
            self._synced = True

    def write(self, func, *args, **kwargs):
        """Run ``func(connection, *args, **kwargs)`` in a write transaction.

        Retried whole after a lost race, a deadlock, a busy SQLite file or
        a dropped connection, at most ``db_max_retries`` times.

        :returns: what ``func`` returns.
        :raises murano_cidr.exceptions.DatabaseUnavailable: when the retries
            are exhausted or the database fails otherwise.
        :raises murano_cidr.exceptions.DatabaseNotSynced: if ``db sync`` has
            not been run.
        """
        if self._writer is not None:
            return self._transaction(
                lambda: self._writer.transaction(self.engine), func, args,
                kwargs)
        return self._transaction(
            lambda: self._manager.writer.connection.using(_Context()), func,
            args, kwargs)

    def read(self, func, *args, **kwargs):
        """Run ``func(connection, *args, **kwargs)`` in a read transaction.

        :returns: what ``func`` returns.
        :raises murano_cidr.exceptions.DatabaseUnavailable: when the retries
            are exhausted or the database fails otherwise.
        :raises murano_cidr.exceptions.DatabaseNotSynced: if ``db sync`` has
            not been run.
        """
        return self._transaction(
            lambda: self._manager.reader.connection.using(_Context()), func,
            args, kwargs)

    def _transaction(self, begin, func, args, kwargs):
        # One deadline for the whole call, the first connection included.
        deadline = self._deadline()
        self.ensure_synced(deadline)
        self.wait_for_connection(deadline)

        def attempt(connected):
            # NOTE: begun again on every attempt, so a retry's pause does
            # not hold SQLite's turn.
            with begin() as conn:
                connected(True)
                return func(conn, *args, **kwargs)

        with self.translate_errors():
            return self._retry(attempt, deadline)

    def close(self):
        """Close the pooled connections (the engine stays usable)."""
        if self._writer is not None:
            self._writer.close()
        self._manager.dispose_pool()
