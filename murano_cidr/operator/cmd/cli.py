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
with the exit codes of :mod:`murano_cidr.operator.cmd.common`.

Each group of commands lives in its own module with a ``register(subparsers)``
function; the parsers it adds set ``action``, a callable taking the
configuration and returning an exit code (or None for success).
"""

import argparse
import importlib
import sys

from murano_cidr.operator.cmd import common

PROG = "murano-cidr"

#: Every command, the module whose ``register(commands)`` adds it, and its
#: line in ``--help``, in help order. Only the modules of the commands
#: named on the command line are imported: ``--version``, ``--help`` and
#: each command load nothing they do not run.
COMMANDS = (
    ("allocate", "allocations", "Allocate a CIDR for an owner and print it."),
    ("confirm", "allocations", "Confirm that an owner's subnet now exists."),
    ("release", "allocations", "Release the CIDR an owner holds."),
    ("show", "allocations", "Show what an owner holds."),
    ("list", "allocations", "List live allocations."),
    ("usage", "allocations", "Show how much of the pool each scope uses."),
    ("import", "migrating", "Record CIDRs that already exist on the cloud."),
    ("prune", "operations",
     "Release allocations whose owner no longer exists."),
    ("reconcile", "operations",
     "Release allocations whose CIDR is on their router no more."),
    ("convert-openstack", "migrating",
     "Build an import file from the openstack client's output."),
    ("simulate", "simulate",
     "Run K concurrent engines against a model router and print collision "
     "rates beside the birthday bound."),
    ("bench", "bench",
     "Benchmark every driver and backend, and the pool math; unreachable "
     "services are skipped and said so."),
)


class _Only:
    """Sub-parsers that keep the parsers of some commands only."""

    def __init__(self, commands, names):
        self._commands = commands
        self._names = names

    def add_parser(self, name, **kwargs):
        if name in self._names:
            return self._commands.add_parser(name, **kwargs)
        # A parser nobody reads, for a command added as a summary.
        return argparse.ArgumentParser(prog=name, add_help=False)


def add_commands(commands, argv):
    """Add the commands' parsers: in full those that ``argv`` names.

    :param commands: a :class:`murano_cidr.operator.cmd.common.Commands`.
    :param argv: the command line; each command named in it is added with
        its arguments, the others with their help line only.
    """
    named = set(argv)
    loaded = set()
    for name, module, summary in COMMANDS:
        if name not in named:
            commands.add_parser(name, help=summary, add_help=False)
        elif module not in loaded:
            loaded.add(module)
            importlib.import_module(__package__ + "." + module).register(
                _Only(commands, named))


DESCRIPTION = (
    "Allocate, release and inspect the subnet CIDRs of Murano environments "
    "with the driver of [cidr_allocator] in the configuration file "
    "(allocate, confirm, release, show, list, usage); import and prune "
    "allocations (import, prune, reconcile, convert-openstack); measure the "
    "drivers (simulate, bench). Run 'murano-cidr COMMAND --help' for a "
    "command's arguments.")


def main(argv=None):
    """Entry point of the ``murano-cidr`` console script."""
    argv = sys.argv[1:] if argv is None else list(argv)
    opt = common.sub_commands(PROG, lambda cmds: add_commands(cmds, argv))
    return common.main(PROG, opt, argv, description=DESCRIPTION)


if __name__ == "__main__":
    sys.exit(main())
