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

"""Databases for the command tests: an SQLite file, or a fresh PostgreSQL one.

PostgreSQL databases are provisioned with oslo.db's opportunistic
machinery: the ``openstack_citest`` user on localhost (see
``tools/test-setup.sh``), or the admin URL in
``OS_TEST_DBAPI_ADMIN_CONNECTION``. Each test gets a randomly named database,
dropped afterwards.
"""

import os
import uuid

import fixtures
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import provision


class SqliteDatabase(fixtures.Fixture):
    """An SQLite file in a temporary directory; always available.

    :ivar url: the SQLAlchemy URL.
    """

    available = True
    description = "SQLite"

    def _setUp(self):
        path = self.useFixture(fixtures.TempDir()).path
        self.url = "sqlite:///" + os.path.join(path, "murano-cidr.sqlite")


class ProvisionedDatabase(fixtures.Fixture):
    """A new, randomly named database of an oslo.db opportunistic backend.

    :param database_type: ``"postgresql"`` or ``"mysql"``.
    :ivar available: False if the server or the ``openstack_citest`` user
        is missing; ``url`` is None then.
    :ivar url: the SQLAlchemy URL of the new database.
    """

    def __init__(self, database_type):
        super().__init__()
        self.database_type = database_type
        self.description = ("%s as openstack_citest (tools/test-setup.sh)"
                            % database_type)
        self.available = False
        self.url = None

    def _setUp(self):
        try:
            backend = provision.Backend.backend_for_database_type(
                self.database_type)
        except db_exc.BackendNotAvailable:
            return
        ident = "murano_cidr_cmd_%s" % uuid.uuid4().hex[:12]
        backend.create_named_database(ident)
        self.addCleanup(backend.drop_named_database, ident,
                        conditional=True)
        self.url = str(backend.provisioned_database_url(ident)
                       .render_as_string(hide_password=False))
        self.available = True
