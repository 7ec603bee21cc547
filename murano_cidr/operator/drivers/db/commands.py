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

"""The ``db`` driver's side of the commands.

``murano-cidr-manage db sync``, ``db version`` and ``db stamp``; the
database check of ``murano-cidr-status upgrade check``; the shorter waits
of a console script. Found by the commands through the
``murano_cidr.allocator_commands`` entry point; the driver itself
(:mod:`murano_cidr.engine.drivers.db.driver`) never imports it.
"""

from murano_cidr.engine.drivers.db import options
from murano_cidr.operator.drivers import commands
from murano_cidr.operator.drivers.db import manage
from murano_cidr.operator.drivers.db import migration
from murano_cidr.operator.drivers.db import status_checks


class DbCommands(commands.DriverCommands):
    """The ``db`` driver's command side."""

    @classmethod
    def prepare(cls, conf):
        """Create or upgrade the tables (``db sync`` to head)."""
        migration.upgrade(conf)

    @classmethod
    def upgrade_checks(cls):
        return [("Database", status_checks.check_database)]

    @classmethod
    def command_defaults(cls, conf):
        """Give a console script a shorter wait for an unreachable database.

        Values from the configuration files still win.
        """
        conf.set_default("max_retries", options.COMMAND_MAX_RETRIES,
                         group=options.GROUP)
        conf.set_default("retry_interval", options.COMMAND_RETRY_INTERVAL,
                         group=options.GROUP)

    @classmethod
    def manage_commands(cls, subparsers):
        manage.add_command_parsers(subparsers)
