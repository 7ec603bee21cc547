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

"""``murano-cidr-manage``: prepare and inspect the drivers' stores.

Each installed driver adds its own commands (its command side's
``manage_commands()``); the ``db`` driver's create and upgrade its tables::

    murano-cidr-manage [--config-file murano.conf] db sync [REVISION]
    murano-cidr-manage [--config-file murano.conf] db version
    murano-cidr-manage [--config-file murano.conf] db stamp REVISION

and one command changes Murano's core library (the optional MuranoPL
change, :mod:`murano_cidr.operator.cmd.core_library`)::

    murano-cidr-manage murano patch-core-library [--dry-run] PATH

Results go to standard output; errors are one line on standard error with
the exit codes of :mod:`murano_cidr.operator.cmd.common`.
"""

import sys

from murano_cidr.operator.cmd import common
from murano_cidr.operator.cmd import core_library
from murano_cidr.operator.drivers import commands as driver_commands

PROG = "murano-cidr-manage"


def add_command_parsers(subparsers):
    """Add every installed driver's commands; the ``command`` handler."""
    for commands in driver_commands.installed().values():
        commands.manage_commands(subparsers)
    core_library.add_command_parsers(subparsers)


DESCRIPTION = (
    "Create, upgrade and inspect what the allocator drivers keep. Each "
    "installed driver adds its own commands; run the configured driver's "
    "before it is first used and after every upgrade (see COMMAND --help). "
    "'murano patch-core-library' adds the optional release path to "
    "Murano's core library.")

command_opt = common.sub_commands(PROG, add_command_parsers)


def main(argv=None):
    """Entry point of the ``murano-cidr-manage`` console script."""
    return common.main(PROG, command_opt, argv, description=DESCRIPTION)


if __name__ == "__main__":
    sys.exit(main())
