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

"""The one database fixture of the tests, on SQLite, MySQL or PostgreSQL.

Every test that needs a database, unit or functional, uses it, through
:meth:`murano_cidr.tests.base.TestCase.use_database`::

    db = self.use_database("mysql", self.config_fixture)

* ``sqlite``: a file in a temporary directory, so that several processes
  can share it; always available.
* ``mysql``, ``postgresql``: a new, randomly named database created through
  oslo.db's provisioning, as the ``openstack_citest`` user (see
  ``tools/test-setup.sh``) or through ``OS_TEST_DBAPI_ADMIN_CONNECTION``,
  and dropped when the test ends. A missing server leaves the fixture
  unavailable (``available`` False, ``reason`` says why): ``use_database``
  then skips the test on a laptop and fails it in CI.
"""

import os
import uuid

import fixtures
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import provision
import sqlalchemy as sa

from murano_cidr.engine.drivers.db import compat
from murano_cidr.engine.drivers.db import options as db_options
from murano_cidr.operator.drivers.db import migration

SQLITE = "sqlite"
MYSQL = "mysql"
POSTGRESQL = "postgresql"
BACKENDS = (SQLITE, MYSQL, POSTGRESQL)


class Database(fixtures.Fixture):
    """A new, empty database for one test.

    :param backend: one of :data:`BACKENDS`.
    :param conf_fixture: an :class:`oslo_config.fixture.Config`; if given,
        ``[cidr_allocator_database] connection`` is set to the database.
    :param sync: create the db driver's tables (migrate to head).
    :ivar available: False if the server is missing; nothing else is set
        then.
    :ivar reason: what is missing, if not available.
    :ivar url: the database's SQLAlchemy URL, password included.
    :ivar engine: an engine on it, without a connection pool (disposed at
        cleanup).
    """

    def __init__(self, backend=SQLITE, conf_fixture=None, sync=False):
        super().__init__()
        if backend not in BACKENDS:
            raise ValueError("unknown backend %r" % backend)
        self.backend = backend
        self.conf_fixture = conf_fixture
        self.sync = sync
        self.available = False
        self.reason = None
        self.url = None
        self.engine = None

    def _setUp(self):
        # NOTE: a fixture cannot skip its test (fixtures wraps whatever its
        # set-up raises), so a missing server is reported, not raised.
        if self.backend == SQLITE:
            path = self.useFixture(fixtures.TempDir()).path
            self.url = "sqlite:///" + os.path.join(path, "murano-cidr.sqlite")
        else:
            self.url = self._provision()
            if self.url is None:
                return
        self.available = True
        self.engine = sa.create_engine(self.url, poolclass=sa.pool.NullPool)
        self.addCleanup(self.engine.dispose)
        if self.conf_fixture is not None:
            self.conf_fixture.config(group=db_options.GROUP,
                                     connection=self.url)
        if self.sync:
            migration.upgrade_engine(self.engine)

    def _provision(self):
        try:
            backend = provision.Backend.backend_for_database_type(
                self.backend)
        except db_exc.BackendNotAvailable as e:
            self.reason = ("%s as openstack_citest (tools/test-setup.sh): %s"
                           % (self.backend, e))
            return None
        ident = "murano_cidr_%s" % uuid.uuid4().hex[:12]
        backend.create_named_database(ident)
        self.addCleanup(backend.drop_named_database, ident, conditional=True)
        url = backend.provisioned_database_url(ident)
        # NOTE: oslo.db before 12 (Xena's 11.0.0) provisions PostgreSQL as
        # postgresql:// with no driver, and oslo.db logs a warning for every
        # engine made from such a URL; name the driver the extra installs.
        if url.drivername == "postgresql":
            return compat.url_string(url, drivername="postgresql+psycopg2")
        return compat.url_string(url)
