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

"""``murano-cidr``: allocate, release and inspect CIDRs from a shell.

Usage: ``murano-cidr --config-file murano.conf <command> [args]``. Commands
print their result on standard output; errors are one line on standard error
with the exit codes of :mod:`murano_cidr.cmd.common`.

Each group of commands lives in its own module with a ``register(subparsers)``
function; the parsers it adds set ``action``, a callable taking the
configuration and returning an exit code (or None for success).
"""

import sys

from murano_cidr.cmd import allocations
from murano_cidr.cmd import bench
from murano_cidr.cmd import common
from murano_cidr.cmd import operations
from murano_cidr.cmd import simulate

PROG = "murano-cidr"

#: The modules whose ``register(subparsers)`` add commands, in help order.
COMMAND_MODULES = [allocations, operations, simulate, bench]


def add_command_parsers(subparsers):
    """Add every sub-command's parser; the ``command`` option's handler."""
    subparsers.metavar = "COMMAND"
    for module in COMMAND_MODULES:
        module.register(subparsers)


DESCRIPTION = (
    "Allocate, release and inspect the subnet CIDRs of Murano environments "
    "with the driver of [cidr_allocator] in the configuration file; import "
    "and prune allocations; measure the drivers (simulate, bench). Run "
    "'murano-cidr COMMAND --help' for a command's arguments.")

command_opt = common.CommandOpt("command", title="Commands",
                                handler=add_command_parsers,
                                help="the command to run")


def main(argv=None):
    """Entry point of the ``murano-cidr`` console script."""
    return common.main(PROG, command_opt, argv, description=DESCRIPTION)


if __name__ == "__main__":
    sys.exit(main())
