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
"""

import json
import sys

from oslo_config import cfg
from oslo_log import log as logging

from murano_cidr import allocator
from murano_cidr.cmd import common

PROG = "murano-cidr"


def _add_allocate(subparsers):
    parser = subparsers.add_parser(
        "allocate", help="Allocate a CIDR for an owner and print it.")
    parser.add_argument("owner", help="The owner (Murano's network id).")
    parser.add_argument("--scope", help="What must not overlap (router id).")
    parser.add_argument("--taken", action="append", default=[],
                        metavar="CIDR",
                        help="A CIDR already in use; repeat as needed.")
    parser.add_argument("--ip-version", type=int, choices=(4, 6), default=4)
    parser.set_defaults(action=do_allocate)


def _add_release(subparsers):
    parser = subparsers.add_parser(
        "release", help="Release the CIDR an owner holds.")
    parser.add_argument("owner")
    parser.set_defaults(action=do_release)


def _add_show(subparsers):
    parser = subparsers.add_parser("show", help="Show what an owner holds.")
    parser.add_argument("owner")
    parser.add_argument("--format", choices=("table", "json"),
                        default="table")
    parser.set_defaults(action=do_show)


def _add_list(subparsers):
    parser = subparsers.add_parser("list", help="List live allocations.")
    parser.add_argument("--scope")
    parser.add_argument("--format", choices=("table", "json"),
                        default="table")
    parser.set_defaults(action=do_list)


def add_command_parsers(subparsers):
    """Add every sub-command's parser; the ``command`` option's handler."""
    for add in (_add_allocate, _add_release, _add_show, _add_list):
        add(subparsers)


command_opt = cfg.SubCommandOpt("command", title="Commands",
                                handler=add_command_parsers,
                                help="Available commands")


def _print_allocations(allocations, fmt):
    if fmt == "json":
        print(json.dumps([a.to_dict() for a in allocations], indent=2))
        return
    rows = [("OWNER", "CIDR", "SCOPE", "STATE")]
    for a in allocations:
        rows.append((a.owner, a.cidr, a.scope or "-",
                     "confirmed" if a.confirmed else "reserved"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for row in rows:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())


def do_allocate(conf, driver):
    args = conf.command
    print(driver.allocate(args.owner, scope=args.scope, taken=args.taken,
                          ip_version=args.ip_version))


def do_release(conf, driver):
    if driver.release(conf.command.owner):
        print("released %s" % conf.command.owner)
    else:
        print("%s held nothing" % conf.command.owner)


def do_show(conf, driver):
    allocation = driver.get(conf.command.owner)
    if allocation is None:
        print("%s: error: %s holds no allocation"
              % (PROG, conf.command.owner), file=sys.stderr)
        return common.EXIT_FAILED
    _print_allocations([allocation], conf.command.format)


def do_list(conf, driver):
    _print_allocations(driver.list(scope=conf.command.scope),
                       conf.command.format)


def main(argv=None):
    """Entry point of the ``murano-cidr`` console script."""
    conf = cfg.ConfigOpts()
    logging.register_options(conf)
    conf.register_cli_opt(command_opt)
    argv = sys.argv[1:] if argv is None else argv

    def _run():
        conf(argv, project="murano-cidr", prog=PROG)
        logging.setup(conf, "murano-cidr")
        with allocator.get_allocator(conf) as driver:
            return conf.command.action(conf, driver)

    return common.run(PROG, _run, conf)


if __name__ == "__main__":
    sys.exit(main())
