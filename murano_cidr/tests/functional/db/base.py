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

"""The three backends the db driver is tested on, as test-case mixins.

Each mixin names a backend of :class:`murano_cidr.tests.db_fixture.Database`
(the one database fixture of the tests): a fresh database per test, which
skips on a laptop where the server is missing and fails in CI.

A test module writes its tests once, in a mixin, and runs them on each
backend::

    class TestSqlite(base.SqliteBackend, Tests, base.DbTestCase): ...
    class TestMySQL(base.MySQLBackend, Tests, base.DbTestCase): ...
    class TestPostgresql(base.PostgresqlBackend, Tests, base.DbTestCase): ...
"""

import multiprocessing
from multiprocessing import util as mp_util
import queue

from murano_cidr.engine import allocator
from murano_cidr.engine.drivers.db import options as db_options
from murano_cidr.operator.drivers.db import migration
from murano_cidr.tests import base
from murano_cidr.tests import db_fixture

WORKER_TIMEOUT = 240

mp_util.get_temp_dir()


class _Backend(object):
    """Set ``url`` and ``engine`` to a new database of :attr:`backend`."""

    backend = None

    def setUp(self):
        db = self.use_database(self.backend)
        self.url, self.engine = db.url, db.engine
        super().setUp()


class SqliteBackend(_Backend):
    backend = db_fixture.SQLITE


class MySQLBackend(_Backend):
    backend = db_fixture.MYSQL


class PostgresqlBackend(_Backend):
    backend = db_fixture.POSTGRESQL


class DbTestCase(base.TestCase):
    """Helpers shared by every backend."""

    #: ``[cidr_allocator]`` settings of every driver a test builds.
    pool_settings = {"driver": "db", "pool_cidrs": ["10.0.0.0/16"],
                     "subnet_prefixlen": 24}

    def setUp(self):
        super().setUp()
        self.db_config(connection=self.url)

    def db_config(self, **kwargs):
        """Override ``[cidr_allocator_database]`` options for this test."""
        self.config_fixture.config(group=db_options.GROUP, **kwargs)

    def sync(self):
        """Create the driver's tables."""
        migration.upgrade_engine(self.engine)

    def make_driver(self, **overrides):
        """Build a db driver on this test's database."""
        settings = dict(self.pool_settings)
        settings.update(overrides)
        self.config(**settings)
        driver = allocator.get_allocator(self.conf)
        self.addCleanup(driver.close)
        return driver

    def run_workers(self, target, args_list):
        """Run ``target(*args, barrier, results)`` in new processes.

        The processes start together (a barrier) and each puts one result
        on the queue.

        :returns: the results, one per process.
        """
        return self.collect_workers(*self.start_workers(target, args_list))

    @staticmethod
    def worker_context():
        """Return the multiprocessing context the workers run in.

        Their queues and events must come from it.
        """
        # NOTE: forkserver, not fork: no engine or connection of this
        # process leaks into a worker, and the server forks workers with
        # the modules already imported, which spawn would redo each time.
        return multiprocessing.get_context("forkserver")

    def start_workers(self, target, args_list):
        """Start ``target(*args, barrier, results)`` in new processes.

        :returns: ``(processes, results)`` for :meth:`collect_workers`.
        """
        context = self.worker_context()
        context.set_forkserver_preload([target.__module__])
        barrier = context.Barrier(len(args_list))
        results = context.Queue()
        processes = [context.Process(target=target,
                                     args=tuple(args) + (barrier, results))
                     for args in args_list]
        for process in processes:
            process.start()
        self.addCleanup(self._reap, processes)
        # NOTE: the workers unpickle the barrier after start() returned,
        # which no longer holds its arguments: keep it alive until then.
        self.addCleanup(lambda: barrier)
        return processes, results

    def collect_workers(self, processes, results):
        """Wait for the workers :meth:`start_workers` started.

        :returns: the results, one per process.
        """
        collected = []
        for _ in processes:
            try:
                collected.append(results.get(timeout=WORKER_TIMEOUT))
            except queue.Empty:
                self.fail("a worker process did not report within %d s"
                          % WORKER_TIMEOUT)
        for process in processes:
            process.join(WORKER_TIMEOUT)
            self.assertEqual(0, process.exitcode)
        return collected

    @staticmethod
    def _reap(processes):
        for process in processes:
            if process.is_alive():
                process.terminate()
                process.join(10)
