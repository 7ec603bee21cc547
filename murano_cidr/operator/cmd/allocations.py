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

"""The ``murano-cidr`` commands that act on allocations one at a time.

``allocate``, ``confirm``, ``release``, ``show``, ``list`` and ``usage``.
Each takes ``--format table|json``; errors and exit codes are those of
:mod:`murano_cidr.operator.cmd.common`.
"""

import sys

from murano_cidr.engine.drivers import capabilities
from murano_cidr.engine import pool_cidrs
from murano_cidr import exceptions
from murano_cidr.operator.cmd import common
from murano_cidr.operator.cmd import output
from murano_cidr.operator.cmd import store
from murano_cidr.operator.operations import usage as usage_mod

Capability = capabilities.Capability

#: What the commands that read allocations need: allocations kept, and
#: seen by this process although the engines made them.
READS_ALLOCATIONS = (Capability.SHARES_STATE,)

ALLOCATION_HEADERS = ("OWNER", "CIDR", "SCOPE", "STATE", "CREATED")
USAGE_HEADERS = ("SCOPE", "IP", "POOL", "SIZE", "ALLOCATED", "RELEASED",
                 "TAKEN", "FREE", "USED%", "OUTSIDE")
#: What ``usage --format json`` prints of each row: the table's columns,
#: each once (``allocated`` counts the subnets the allocations block,
#: released ones still held back included; ``released`` how many of those
#: allocations are released).
USAGE_KEYS = ("scope", "ip_version", "pool", "prefixlen", "size", "allocated",
              "released", "taken", "free", "used_percent", "outside")


def register(subparsers):
    """Add the commands of this module to the ``murano-cidr`` parser."""
    parser = subparsers.add_parser(
        "allocate", help="Allocate a CIDR for an owner and print it.",
        description="Allocate a CIDR from the pool for an owner, avoiding "
        "the CIDRs given with --taken and, for drivers that keep state, the "
        "live allocations of the scope. Allocating again for the same owner "
        "returns the same CIDR with such drivers.")
    parser.add_argument("owner", help="The owner (Murano's network id).")
    parser.add_argument("--scope", help="What must not overlap (router id).")
    parser.add_argument("--taken", action="append", default=[],
                        metavar="CIDR",
                        help="A CIDR already in use on the router; repeat "
                        "as needed.")
    parser.add_argument("--ip-version", type=int, choices=(4, 6), default=4,
                        help="IP version of the CIDR (default: 4).")
    output.add_format_argument(parser)
    parser.set_defaults(action=do_allocate)

    parser = subparsers.add_parser(
        "confirm", help="Confirm that an owner's subnet now exists.",
        description="Tell the allocator that the subnet of an owner was "
        "created, so a reservation becomes an allocation. Drivers without "
        "reservations accept it and do nothing.")
    parser.add_argument("owner", help="The owner given to allocate.")
    output.add_format_argument(parser)
    parser.set_defaults(action=do_confirm)

    parser = subparsers.add_parser(
        "release", help="Release the CIDR an owner holds.",
        description="Free the CIDR of an owner for reuse. Releasing an "
        "owner that holds nothing is not an error.")
    parser.add_argument("owner", help="The owner given to allocate.")
    output.add_format_argument(parser)
    parser.set_defaults(action=do_release)

    parser = subparsers.add_parser(
        "show", help="Show what an owner holds.",
        description="Show the allocation of one owner; exit code 1 if it "
        "holds none.")
    parser.add_argument("owner", help="The owner given to allocate.")
    output.add_format_argument(parser)
    parser.set_defaults(action=do_show)

    parser = subparsers.add_parser(
        "list", help="List live allocations.",
        description="List the live allocations, of one scope or of all, "
        "sorted by scope and CIDR, then the released CIDRs the driver "
        "still holds back until their subnet has left the router (STATE "
        "released, OWNER the former owner).")
    parser.add_argument("--scope", help="Only this scope (router id).")
    output.add_format_argument(parser)
    parser.set_defaults(action=do_list)

    parser = subparsers.add_parser(
        "usage", help="Show how much of the pool each scope uses.",
        description="For each scope holding allocations (or the one given), "
        "print the pool, its size in subnets, the subnets blocked by live "
        "allocations (ALLOCATED) and by the CIDRs given with --taken "
        "(TAKEN), the free ones and the percentage used. RELEASED counts "
        "the released CIDRs still held back (their subnet may still be on "
        "the router); they are part of ALLOCATED.")
    parser.add_argument("--scope", help="Only this scope (router id).")
    parser.add_argument("--taken", action="append", default=[],
                        metavar="CIDR",
                        help="A CIDR in use on the scope's router outside "
                        "the allocator; needs --scope; repeat as needed.")
    parser.add_argument("--ip-version", type=int, choices=(4, 6),
                        help="Only the pool of this IP version (default: "
                        "every configured pool).")
    output.add_format_argument(parser)
    parser.set_defaults(action=do_usage)


def allocation_row(a):
    """Return the table row of an allocation."""
    if a.released_at is not None:
        state = "released"
    else:
        state = "confirmed" if a.confirmed else "reserved"
    return (a.owner, a.cidr, a.scope, state,
            a.created_at.strftime("%Y-%m-%d %H:%M:%S") if a.created_at
            else None)


def print_allocations(allocations, fmt):
    """Print allocations as an aligned table or as JSON."""
    output.emit(fmt, [a.to_dict() for a in allocations], ALLOCATION_HEADERS,
                [allocation_row(a) for a in allocations])


def do_allocate(conf):
    args = conf.command
    taken = _taken(args.taken)
    # A reservation held by this short-lived process would be gone when it
    # exits.
    with store.open_driver(
            conf, require=Capability.OUTLIVES_PROCESS,
            action="allocate from the command line") as driver:
        cidr = driver.allocate(args.owner, scope=args.scope, taken=taken,
                               ip_version=args.ip_version)
    if args.format == output.JSON:
        output.emit(args.format, {"owner": args.owner, "cidr": cidr,
                                  "scope": args.scope,
                                  "ip_version": args.ip_version})
    else:
        print(cidr)


def do_confirm(conf):
    args = conf.command
    with store.open_driver(
            conf, require=Capability.OUTLIVES_PROCESS,
            action="confirm from the command line") as driver:
        driver.confirm(args.owner)
    if args.format == output.JSON:
        output.emit(args.format, {"owner": args.owner, "confirmed": True})
    else:
        print("confirmed %s" % args.owner)


def do_release(conf):
    args = conf.command
    with store.open_driver(conf) as driver:
        released = driver.release(args.owner)
    if args.format == output.JSON:
        output.emit(args.format, {"owner": args.owner, "released": released})
    else:
        print(("released %s" if released else "%s held nothing")
              % args.owner)


def do_show(conf):
    args = conf.command
    with store.open_driver(conf, require=READS_ALLOCATIONS,
                           action="show an allocation") as driver:
        allocation = driver.get(args.owner)
    if allocation is None:
        common.error("%s holds no allocation" % args.owner)
        return common.EXIT_FAILED
    if args.format == output.JSON:
        output.emit(args.format, allocation.to_dict())
    else:
        print_allocations([allocation], args.format)


def do_list(conf):
    args = conf.command
    with store.open_driver(conf, require=READS_ALLOCATIONS,
                           action="list allocations") as driver:
        allocations = driver.list(scope=args.scope)
        allocations += driver.list_released(scope=args.scope)
    print_allocations(allocations, args.format)


def _taken(values):
    """Return the ``--taken`` CIDRs, refusing any with host bits set.

    A subnet's CIDR has none (Neutron refuses them, as ``import`` does);
    one with host bits is a typing mistake that would be read as the
    whole network it falls in.

    :raises murano_cidr.exceptions.InvalidCidr: for a value that is not a
        CIDR or has host bits set.
    """
    for value in values:
        pool_cidrs.network(value, "--taken")
    return values


def do_usage(conf):
    args = conf.command
    if args.taken and args.scope is None:
        raise exceptions.InvalidArgument(
            name="--taken", value=", ".join(args.taken),
            reason="lists CIDRs of one router; give --scope too")
    scope = usage_mod.ALL if args.scope is None else args.scope
    taken = _taken(args.taken)
    with store.open_driver(conf, require=READS_ALLOCATIONS,
                           action="report usage") as driver:
        rows = usage_mod.report(driver, scope=scope, taken=taken,
                                ip_version=args.ip_version)
    # NOTE: a driver counting its own usage may not know released CIDRs.
    rows = [dict(r, released=r.get("released", 0)) for r in rows]
    output.emit(args.format, [{key: r[key] for key in USAGE_KEYS}
                              for r in rows], USAGE_HEADERS,
                [(r["scope"], r["ip_version"], "%s /%d" % (r["pool"],
                                                           r["prefixlen"]),
                  r["size"], r["allocated"], r["released"],
                  r["taken"], r["free"],
                  "%.1f" % r["used_percent"], r["outside"]) for r in rows])
    outside = sum(r["outside"] for r in rows)
    if outside:
        print("%s: warning: %d live allocation(s) lie outside the configured "
              "pool (OUTSIDE; a pool change?): they still hold their CIDRs "
              "but are not counted; see 'list', release them when their "
              "networks are gone" % ("murano-cidr", outside), file=sys.stderr)
