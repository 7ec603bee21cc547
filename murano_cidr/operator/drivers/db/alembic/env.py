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

"""Alembic environment of the ``db`` driver.

Run through :mod:`murano_cidr.operator.drivers.db.migration`, which hands
over an open connection in ``config.attributes["connection"]``. The version
table is the driver's own, so these migrations can share a database with
another service's.
"""

from alembic import context

from murano_cidr.engine.drivers.db import models
from murano_cidr.operator.drivers.db import revisions

config = context.config


def _configure(**kwargs):
    context.configure(target_metadata=models.BASE.metadata,
                      version_table=revisions.VERSION_TABLE,
                      include_object=revisions.include_object,
                      **kwargs)


def run_migrations_offline():
    """Emit the SQL of the migrations for the URL in the configuration."""
    _configure(url=config.get_main_option("sqlalchemy.url"),
               literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online():
    """Run the migrations on the connection the caller opened."""
    connection = config.attributes["connection"]
    _configure(connection=connection)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
