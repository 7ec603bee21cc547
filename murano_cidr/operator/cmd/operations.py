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

"""The ``murano-cidr`` commands that repair allocations.

``prune`` releases allocations whose owner is gone (from a file of live
owners or Murano's own database); ``reconcile`` releases those whose CIDR
is on their router no more (from the listings ``convert-openstack`` reads).
They print a report of every row they did not simply accept, then a
summary line; ``--format json`` prints every row.

Exit codes, beyond those of :mod:`murano_cidr.operator.cmd.common`: ``0``
whether or not anything would be or was released; ``2`` if ``--apply``
would release more than ``--max-release`` percent of the allocations
(nothing is released).
"""

import argparse
import datetime
import os

from murano_cidr.engine.drivers import capabilities
from murano_cidr import exceptions
from murano_cidr import messages
from murano_cidr.operator.cmd import output
from murano_cidr.operator.cmd import store
from murano_cidr.operator.operations import murano_db
from murano_cidr.operator.operations import openstack_export
from murano_cidr.operator.operations import pruning
from murano_cidr.operator.operations import reconciling

Capability = capabilities.Capability

PROG = "murano-cidr"
PRUNE_HEADERS = ("OWNER", "CIDR", "SCOPE", "ACTION", "REASON")

#: Where ``prune --murano-db`` takes its URL from when not given, so that a
#: password need not be on the command line.
MURANO_DB_VARIABLE = "MURANO_CIDR_MURANO_DB"


def _grace(text):
    try:
        return pruning.parse_duration(text)
    except exceptions.InvalidArgument as e:
        raise argparse.ArgumentTypeError(str(e))


def _percent(text):
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(
            "expected a whole percentage from 0 to 100, got %r" % text)
    return value


def _add_plan_arguments(parser, source):
    """Add what prune and reconcile share: grace, scope, share, apply."""
    parser.add_argument("--grace", type=_grace,
                        default=pruning.DEFAULT_GRACE, metavar="DURATION",
                        help="Never release an allocation younger than "
                        "this: seconds, or a number with s, m, h, d or w "
                        "(default: 24h). Make it longer than the age of the "
                        "%s and than a deployment takes." % source)
    parser.add_argument("--scope", help="Only this scope (router id).")
    parser.add_argument("--max-release", type=_percent, default=50,
                        metavar="PERCENT",
                        help="Refuse to apply a plan that releases more "
                        "than this share of the allocations it looked at "
                        "(default: 50); wrong %s look like a cloud whose "
                        "networks were all deleted." % source)
    parser.add_argument("--apply", action="store_true",
                        help="Release what the report lists; without it, "
                        "nothing changes.")


def register(subparsers):
    """Add ``prune`` and ``reconcile``."""
    parser = subparsers.add_parser(
        "prune", help="Release allocations whose owner no longer exists.",
        description="Compare the allocations with the owners that still "
        "exist (Murano's object ids, read from Murano's database, and/or a "
        "file of ids) and report those that would be released: owner not "
        "live and older than the grace period. Nothing is released without "
        "--apply.")
    parser.add_argument("--murano-db", metavar="URL",
                        default=os.environ.get(MURANO_DB_VARIABLE),
                        help="Murano's database (its [database] connection "
                        "URL), read only: every MuranoPL object id of its "
                        "environments and sessions is a live owner. "
                        "Default: the %s environment variable, which "
                        "keeps the password off the command line."
                        % MURANO_DB_VARIABLE)
    parser.add_argument("--live-owners", metavar="FILE",
                        help="More owners that exist, e.g. the Neutron "
                        "network ids of imported allocations: JSON (e.g. "
                        "'openstack network list -f json'), CSV with an id "
                        "column, or one id per line ('openstack network "
                        "list -f value -c ID'); - for standard input.")
    parser.add_argument("--live-owners-format",
                        choices=("json", "csv", "text"),
                        help="The format of the live owners file (default: "
                        "from its suffix or content).")
    _add_plan_arguments(parser, "live owners")
    output.add_format_argument(parser)
    parser.set_defaults(action=do_prune)

    parser = subparsers.add_parser(
        "reconcile",
        help="Release allocations whose CIDR is on their router no more.",
        description="Compare each allocation with the subnets its router "
        "(its scope) carries, from the listings convert-openstack reads, "
        "and report those that would be released: no subnet of the router "
        "overlaps it and it is older than the grace period. Released CIDRs "
        "the driver still holds back (db) are freed the same way, once "
        "released longer ago than both the grace period and [cidr_allocator] "
        "release_grace. Allocations "
        "without a scope, of a router without a ports file, or of a router "
        "on a subnet the listing does not show are kept. Nothing is "
        "released without --apply.")
    parser.add_argument("--subnets", required=True, metavar="FILE",
                        help="The output of 'openstack subnet list -f "
                        "json', taken with an account that sees every "
                        "project.")
    parser.add_argument("--ports-dir", required=True, metavar="DIR",
                        help="A directory of <router id>.json files, each "
                        "the output of 'openstack port list --router <router "
                        "id> -f json'.")
    _add_plan_arguments(parser, "listings")
    output.add_format_argument(parser)
    parser.set_defaults(action=do_reconcile)


def _live_owners(args):
    if not args.murano_db and not args.live_owners:
        raise exceptions.InvalidArgument(
            name="prune arguments", value="no --murano-db, no --live-owners",
            reason="say where the live owners come from: --murano-db URL "
            "(or %s), --live-owners FILE, or both" % MURANO_DB_VARIABLE)
    live = set()
    if args.murano_db:
        live.update(murano_db.live_owners(args.murano_db))
    if args.live_owners:
        live.update(pruning.read_live_owners(args.live_owners,
                                             args.live_owners_format))
    if not live:
        raise exceptions.InvalidArgument(
            name="Murano database", value=messages.safe_url(
                args.murano_db),
            reason="holds no environment; pruning against it would release "
            "every allocation, so it is refused (reconcile compares with "
            "the routers instead)")
    return frozenset(live)


def do_prune(conf):
    args = conf.command
    live = _live_owners(args)
    with store.open_driver(
            conf, require=Capability.SHARES_STATE,
            action="prune allocations") as driver:
        decisions = pruning.plan(driver.list(scope=args.scope), live,
                                 grace=args.grace, now=driver.now())
        if args.apply:
            pruning.check_share(decisions, args.max_release)
            pruning.apply(driver, decisions)
    _print_plan(args, decisions, pruning.OWNER_LIVE, "live owners")


def do_reconcile(conf):
    args = conf.command
    listing = openstack_export.read_router_listing(args.subnets,
                                                   args.ports_dir)
    with store.open_driver(
            conf, require=Capability.SHARES_STATE,
            action="reconcile allocations") as driver:
        decisions = reconciling.plan(
            driver.list(scope=args.scope)
            + driver.list_released(scope=args.scope), listing,
            grace=args.grace, release_grace=driver.release_grace,
            now=driver.now())
        if args.apply:
            pruning.check_share(
                decisions, args.max_release, name="reconcile plan",
                hint="check that the listings are current, complete and of "
                "this cloud")
            reconciling.apply(driver, decisions)
    _print_plan(args, decisions, reconciling.ON_ROUTER, "on their router")


def _print_plan(args, decisions, quiet_code, quiet_label):
    """Print a prune or reconcile plan; rows of ``quiet_code`` are counted."""
    counts = {}
    for d in decisions:
        counts[d.action] = counts.get(d.action, 0) + 1
    if args.format == output.JSON:
        output.emit(args.format, {
            "applied": args.apply,
            "grace_seconds": int(args.grace / datetime.timedelta(seconds=1)),
            "counts": counts, "allocations": [d.to_dict() for d in decisions]})
        return
    shown = [d for d in decisions if d.code != quiet_code]
    if shown:
        output.emit(args.format, None, PRUNE_HEADERS, [
            (d.allocation.owner, d.allocation.cidr, d.allocation.scope,
             d.action, d.reason) for d in shown])
    fine = "%d %s" % (len(decisions) - len(shown), quiet_label)
    if args.apply:
        print("released %d, kept %d (%s), skipped %d"
              % (counts.get(pruning.RELEASED, 0),
                 counts.get(pruning.KEEP, 0), fine,
                 counts.get(pruning.SKIPPED, 0)))
    else:
        print("would release %d, keep %d (%s); dry run, nothing "
              "changed: pass --apply to release"
              % (counts.get(pruning.RELEASE, 0), counts.get(pruning.KEEP, 0),
                 fine))
