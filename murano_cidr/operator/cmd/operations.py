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

"""The ``murano-cidr`` commands that repair and migrate allocations.

``import`` records CIDRs that already exist on a cloud (``convert-openstack``
builds its input from the ``openstack`` client's output); ``prune``
releases allocations whose owner is gone (from a file of live owners or
Murano's own database); ``reconcile`` releases those whose CIDR is on their
router no more (from the same listings ``convert-openstack`` reads). They
print a report of every row they did not simply accept, then a summary
line; ``--format json`` prints every row.

Exit codes, beyond those of :mod:`murano_cidr.operator.cmd.common`:

* ``import``: ``2`` if the file holds invalid rows, ``1`` if rows conflict
  with live allocations; nothing is written in either case unless
  ``--continue-on-error`` is given, and then the valid rows are written and
  the exit code still says some were not.
* ``prune`` and ``reconcile``: ``0`` whether or not anything would be or
  was released; ``2`` if ``--apply`` would release more than
  ``--max-release`` percent of the allocations (nothing is released).
"""

import argparse
import contextlib
import datetime
import importlib.util
import itertools
import json
import os
import stat
import sys
import textwrap

from murano_cidr.engine.drivers import capabilities
from murano_cidr.engine import pool
from murano_cidr import exceptions
from murano_cidr import messages
from murano_cidr.operator.cmd import common
from murano_cidr.operator.cmd import output
from murano_cidr.operator.cmd import store
from murano_cidr.operator.operations import importing
from murano_cidr.operator.operations import murano_db
from murano_cidr.operator.operations import openstack_export
from murano_cidr.operator.operations import pruning
from murano_cidr.operator.operations import reconciling

Capability = capabilities.Capability

PROG = "murano-cidr"
IMPORT_HEADERS = ("WHERE", "STATUS", "OWNER", "CIDR", "SCOPE", "REASON")
#: Rows ``import`` shows in its table, at most: the table's widths need
#: them in memory. ``--format json`` prints every row, one at a time.
SHOWN_ROWS = 1000
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
    """Add ``import``, ``prune``, ``reconcile`` and ``convert-openstack``."""
    parser = subparsers.add_parser(
        "import", help="Record CIDRs that already exist on the cloud.",
        description="Record the CIDRs a cloud already uses, so a driver "
        "that keeps state (db) never hands them out again. FILE is JSON or "
        "CSV with scope (router id), cidr and owner (network id) per row; "
        "see the operations guide for producing it with the openstack "
        "client. Rows already recorded are skipped, so importing twice is "
        "harmless; a row that conflicts with a live allocation is reported, "
        "never overwritten. Nothing is written if any row is invalid or "
        "conflicts, unless --continue-on-error is given.")
    parser.add_argument("file", metavar="FILE",
                        help="The JSON (a list, or one object per line) or "
                        "CSV file, or - for standard input.")
    parser.add_argument("--input-format", choices=("json", "csv"),
                        help="The format of FILE (default: from its suffix "
                        "or content).")
    parser.add_argument("--dry-run", action="store_true",
                        help="Check the file and report what would be "
                        "imported; write nothing.")
    parser.add_argument("--continue-on-error", action="store_true",
                        help="Import the valid, non-conflicting rows and "
                        "report the others, instead of importing nothing.")
    output.add_format_argument(parser)
    parser.set_defaults(action=do_import)

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

    parser = subparsers.add_parser(
        "convert-openstack",
        help="Build an import file from the openstack client's output.",
        description="Join 'openstack subnet list -f json' and, for each "
        "router, 'openstack port list --router <id> -f json' into the JSON "
        "that import reads: one row per router interface subnet inside the "
        "configured pools, with the router as scope and the network as "
        "owner. The rows go to standard output; what was left out, and why, "
        "to standard error.")
    parser.add_argument("--subnets", required=True, metavar="FILE",
                        help="The output of 'openstack subnet list -f "
                        "json'.")
    parser.add_argument("--ports-dir", required=True, metavar="DIR",
                        help="A directory of <router id>.json files, each "
                        "the output of 'openstack port list --router <router "
                        "id> -f json'.")
    parser.set_defaults(action=do_convert_openstack)


def do_import(conf):
    args = conf.command
    with store.open_driver(
            conf, require=(Capability.SHARES_STATE, Capability.IMPORTS),
            action="import allocations") as driver:
        with _progress(_size(args.file), "bytes read") as bar:
            rows = importing.read_file(args.file, driver.pools,
                                       args.input_format, progress=bar)
        with rows:
            importing.plan(rows, driver.live_allocations())
            counts = importing.count(rows)
            blocked = counts[importing.INVALID] or counts[importing.CONFLICT]
            if not args.dry_run and (args.continue_on_error or not blocked):
                with _progress(counts[importing.NEW], "rows written") as bar:
                    importing.apply(driver, rows, args.continue_on_error,
                                    progress=bar)
                counts = importing.count(rows)
            _print_import(args, rows, counts)
    if not blocked:
        return None
    code = (common.EXIT_USAGE if counts[importing.INVALID]
            else common.EXIT_FAILED)
    problems = "%d invalid and %d conflicting of %d rows" % (
        counts[importing.INVALID], counts[importing.CONFLICT], len(rows))
    if args.dry_run:
        common.error("%s: %s (dry run, nothing was written)"
                     % (args.file, problems))
    elif args.continue_on_error:
        common.error("%s: %s were skipped" % (args.file, problems))
    else:
        common.error("%s: %s; nothing was imported (fix the file, or pass "
                     "--continue-on-error to import the rest)"
                     % (args.file, problems))
    return code


def _size(path):
    """The size of a regular file, for the progress bar; else None."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


@contextlib.contextmanager
def _progress(total, description):
    """Yield a function counting progress, drawn on a terminal only.

    The bar is tqdm's if it is installed (the simulate and bench extras
    install it), else a count on one line, redrawn once a second; nothing
    is drawn when standard error is not a terminal.
    """
    from murano_cidr.measuring import progress
    if not progress.wanted():
        yield None
        return
    if importlib.util.find_spec("tqdm") is None:
        count = progress.Count(total, sys.stderr, description)
        try:
            yield count.advance
        finally:
            count.close()
        return
    with progress.progress(total, description=description, delay=0,
                           unit_scale=True) as bar:
        bar.started()
        yield bar.advance


def _print_import(args, rows, counts):
    if args.format == output.JSON:
        _print_import_json(args, rows, counts)
        return
    rejected = rows.select(importing.INVALID, importing.CONFLICT)
    shown = list(itertools.islice(rejected, SHOWN_ROWS))
    if shown:
        output.emit(args.format, None, IMPORT_HEADERS, [
            (r.where, r.status) + r.shown() + (r.reason,) for r in shown])
    more = sum(1 for _ in rejected)
    if more:
        print("... and %d more rows not imported, not shown: --format json "
              "lists every row" % more)
    verb = "would import" if args.dry_run else "imported"
    done = counts[importing.NEW] if args.dry_run else counts[
        importing.IMPORTED]
    print("%s %d, already recorded %d, invalid %d, conflicting %d"
          % (verb, done, counts[importing.PRESENT], counts[importing.INVALID],
             counts[importing.CONFLICT]))


def _print_import_json(args, rows, counts):
    """Print what ``output.emit`` would, one row at a time."""
    head = json.dumps({"file": args.file, "dry_run": args.dry_run,
                       "counts": counts}, indent=2, sort_keys=True)
    # "rows" sorts last: the object is the head, then the list.
    print(head[:-2] + ',\n  "rows": [')
    for n, row in enumerate(rows, 1):
        text = json.dumps(row.to_dict(), indent=2, sort_keys=True)
        print(textwrap.indent(text, "    ") +
              ("," if n < len(rows) else ""))
    print("  ]\n}")


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


def do_convert_openstack(conf):
    args = conf.command
    pools = pool.pools_from_conf(conf)
    result = openstack_export.convert(args.subnets, args.ports_dir, pools)
    for router, subnet, reason in result.skipped:
        print(messages.printable("%s: skipped subnet %s of router %s: %s"
                                 % (PROG, subnet, router, reason)),
              file=sys.stderr)
    output.emit(output.JSON, result.rows)
