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

"""Base classes and helpers shared by the unit and functional tests."""

import os

import fixtures
from oslo_config import cfg
from oslo_config import fixture as config_fixture
from oslotest import base

from murano_cidr.operator.drivers import commands
from murano_cidr import opts
from murano_cidr import tests
from murano_cidr.tests import db_fixture


def exit_code(wait_status):
    """The exit code of a child from its :func:`os.waitpid` status.

    What :func:`os.waitstatus_to_exitcode` gives on Python 3.9 and later
    (the floor jobs run Python 3.8): minus the signal that killed it.
    """
    if os.WIFSIGNALED(wait_status):
        return -os.WTERMSIG(wait_status)
    return os.WEXITSTATUS(wait_status)


def services_required():
    """Tell whether a missing service must fail a test instead of skipping.

    ``.ci/run`` exports ``MURANO_CIDR_REQUIRE_SERVICES=1``; ``CI=true`` does
    the same, so CI can never pass by skipping.
    """
    return tests.in_ci()


class TestCase(base.BaseTestCase):
    """Base test case: a private configuration object with our options."""

    def setUp(self):
        super().setUp()
        self.conf = cfg.ConfigOpts()
        self.config_fixture = self.useFixture(
            config_fixture.Config(self.conf))
        commands.register_opts(self.conf)
        self.state_path = self.useFixture(fixtures.TempDir()).path
        self.config(state_path=self.state_path)
        # Console scripts run here read no configuration file of the
        # machine's (/etc/murano/murano.conf...), only those a test gives.
        for name in ("SEARCH_FILES", "SEARCH_DIRS"):
            self.useFixture(fixtures.MonkeyPatch(
                "murano_cidr.operator.cmd.configuration." + name, ()))

    def config(self, **kwargs):
        """Override ``[cidr_allocator]`` options for this test."""
        self.config_fixture.config(group=opts.GROUP, **kwargs)

    def run_main(self, main, *args):
        """Run a console script's ``main`` in this process.

        :param main: a ``main(argv)`` returning an exit code.
        :param args: the command line, without the program name.
        :returns: ``(exit code, standard output, standard error)``.
        """
        out = self.useFixture(fixtures.StringStream("stdout"))
        err = self.useFixture(fixtures.StringStream("stderr"))
        self.useFixture(fixtures.MonkeyPatch("sys.stdout", out.stream))
        self.useFixture(fixtures.MonkeyPatch("sys.stderr", err.stream))
        code = main(list(args))
        out.stream.seek(0)
        err.stream.seek(0)
        return code, out.stream.read(), err.stream.read()

    def require_service(self, available, reason):
        """Skip (on a laptop) or fail (in CI) when a service is missing.

        :param available: whether the service answered.
        :param reason: what is missing, e.g. "Redis on 127.0.0.1:6379".
        """
        if available:
            return
        if services_required():
            self.fail("%s is required in CI but unavailable" % reason)
        self.skipTest("%s is unavailable" % reason)

    def db_config_file(self, db, extra=""):
        """Write a configuration file for the ``db`` driver on ``db``.

        :param db: a :class:`~murano_cidr.tests.db_fixture.Database`.
        :param extra: more ``[cidr_allocator]`` lines.
        :returns: its path, under the state path.
        """
        path = os.path.join(self.state_path, "murano-cidr.conf")
        with open(path, "w") as f:
            f.write("[cidr_allocator]\ndriver = db\nstate_path = %s\n"
                    "pool_cidrs = 10.0.0.0/22\nsubnet_prefixlen = 24\n%s"
                    "[cidr_allocator_database]\nconnection = %s\n"
                    % (self.state_path, extra, db.url))
        return path

    def use_database(self, backend="sqlite", conf_fixture=None, sync=False):
        """Give the test a new database, or skip (laptop) or fail (CI).

        :param backend: ``sqlite``, ``mysql`` or ``postgresql``.
        :param conf_fixture: an oslo.config fixture to point
            ``[cidr_allocator_database] connection`` at the database.
        :param sync: create the db driver's tables.
        :returns: the :class:`~murano_cidr.tests.db_fixture.Database`.
        """
        db = self.useFixture(db_fixture.Database(backend, conf_fixture, sync))
        self.require_service(db.available, db.reason)
        return db
