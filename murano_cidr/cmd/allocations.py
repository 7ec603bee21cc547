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

"""The ``murano-cidr`` commands that act on allocations one at a time."""

import json
import sys

from murano_cidr import allocator
from murano_cidr.cmd import common


def register(subparsers):
    """Add ``allocate``, ``release``, ``show`` and ``list``."""
    parser = subparsers.add_parser(
        "allocate", help="Allocate a CIDR for an owner and print it.")
    parser.add_argument("owner", help="The owner (Murano's network id).")
    parser.add_argument("--scope", help="What must not overlap (router id).")
    parser.add_argument("--taken", action="append", default=[],
                        metavar="CIDR",
                        help="A CIDR already in use; repeat as needed.")
    parser.add_argument("--ip-version", type=int, choices=(4, 6), default=4)
    parser.set_defaults(action=do_allocate)

    parser = subparsers.add_parser(
        "release", help="Release the CIDR an owner holds.")
    parser.add_argument("owner")
    parser.set_defaults(action=do_release)

    parser = subparsers.add_parser("show", help="Show what an owner holds.")
    parser.add_argument("owner")
    parser.add_argument("--format", choices=("table", "json"),
                        default="table")
    parser.set_defaults(action=do_show)

    parser = subparsers.add_parser("list", help="List live allocations.")
    parser.add_argument("--scope")
    parser.add_argument("--format", choices=("table", "json"),
                        default="table")
    parser.set_defaults(action=do_list)


def print_allocations(allocations, fmt):
    """Print allocations as an aligned table or as JSON."""
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


def do_allocate(conf):
    args = conf.command
    with allocator.get_allocator(conf) as driver:
        print(driver.allocate(args.owner, scope=args.scope,
                              taken=args.taken, ip_version=args.ip_version))


def do_release(conf):
    owner = conf.command.owner
    with allocator.get_allocator(conf) as driver:
        released = driver.release(owner)
    print(("released %s" if released else "%s held nothing") % owner)


def do_show(conf):
    with allocator.get_allocator(conf) as driver:
        allocation = driver.get(conf.command.owner)
    if allocation is None:
        print("murano-cidr: error: %s holds no allocation"
              % conf.command.owner, file=sys.stderr)
        return common.EXIT_FAILED
    print_allocations([allocation], conf.command.format)


def do_list(conf):
    with allocator.get_allocator(conf) as driver:
        allocations = driver.list(scope=conf.command.scope)
    print_allocations(allocations, conf.command.format)
