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

"""The ``lock`` driver's side of the commands.

The lock service check of ``murano-cidr-status upgrade check``. Found by the
commands through the ``murano_cidr.allocator_commands`` entry point; the
driver itself (:mod:`murano_cidr.engine.drivers.lock.driver`) never imports it.
"""

from murano_cidr.operator.drivers import commands
from murano_cidr.operator.drivers.lock import status_checks


class LockCommands(commands.DriverCommands):
    """The ``lock`` driver's command side."""

    @classmethod
    def upgrade_checks(cls):
        return [("Lock service", status_checks.check_lock_service)]
