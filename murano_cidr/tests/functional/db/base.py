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

MySQL/MariaDB and PostgreSQL come from oslo.db's opportunistic fixtures: a
randomly named database per test, created as ``openstack_citest`` (see
``tools/test-setup.sh``) or through ``OS_TEST_DBAPI_ADMIN_CONNECTION``. A
missing server skips the tests on a laptop and fails them in CI
(:func:`murano_cidr.tests.base.services_required`). SQLite is a file, so
that several processes can share it.

A test module writes its tests once, in a mixin, and runs them on each
backend::

    class TestSqlite(base.SqliteBackend, Tests, base.DbTestCase): ...
    class TestMySQL(base.MySQLBackend, Tests, base.DbTestCase): ...
    class TestPostgresql(base.PostgresqlBackend, Tests, base.DbTestCase): ...
"""

import multiprocessing
from multiprocessing import util as mp_util
import os
import queue

import fixtures
from oslo_db.sqlalchemy import test_fixtures
import sqlalchemy as sa

from murano_cidr import allocator
from murano_cidr.drivers.db import migration
from murano_cidr import opts
from murano_cidr.tests import base

#: How long a test waits for its worker processes, in seconds.
WORKER_TIMEOUT = 240

# NOTE: multiprocessing keeps one temporary directory (where the
# forkserver's socket lives) for the life of the process. Create it now,
# outside the per-test temporary directory that oslotest removes after each
# test, or the second test could not reach the forkserver.
mp_util.get_temp_dir()


class RequiredInCI(object):
    """Fail instead of skipping when CI requires the database."""

    @property
    def SKIP_ON_UNAVAILABLE_DB(self):
        return not base.services_required()


class _Opportunistic(RequiredInCI, test_fixtures.OpportunisticDBTestMixin):

    def _setup_fixtures(self):
        # Runs first in setUp: everything after it may use the database.
        super()._setup_fixtures()
        self.engine = self._db_default.engine
        self.url = self.engine.url.render_as_string(hide_password=False)


class MySQLBackend(_Opportunistic):
    FIXTURE = test_fixtures.MySQLOpportunisticFixture
    backend = "mysql"


class PostgresqlBackend(_Opportunistic):
    FIXTURE = test_fixtures.PostgresqlOpportunisticFixture
    backend = "postgresql"


class SqliteBackend(object):
    backend = "sqlite"

    def setUp(self):
        path = self.useFixture(fixtures.TempDir()).path
        self.url = "sqlite:///" + os.path.join(path, "murano-cidr.sqlite")
        self.engine = sa.create_engine(self.url, poolclass=sa.pool.NullPool)
        self.addCleanup(self.engine.dispose)
        super().setUp()


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
        self.config_fixture.config(group=opts.DATABASE_GROUP, **kwargs)

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
        # NOTE: forkserver, not fork: no engine or connection of this
        # process leaks into a worker, and the server forks workers with
        # the modules already imported, which spawn would redo each time.
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([target.__module__])
        barrier = context.Barrier(len(args_list))
        results = context.Queue()
        processes = [context.Process(target=target,
                                     args=tuple(args) + (barrier, results))
                     for args in args_list]
        for process in processes:
            process.start()
        self.addCleanup(self._reap, processes)
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
