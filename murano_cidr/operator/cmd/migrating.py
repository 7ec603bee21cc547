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

"""The ``murano-cidr`` commands that bring a cloud's existing CIDRs in.

``import`` records CIDRs that already exist on a cloud, so a driver that
keeps state never hands them out again; ``convert-openstack`` builds its
input from the ``openstack`` client's output. ``import`` prints a report of
every row it did not simply accept, then a summary line; ``--format json``
prints every row.

Exit codes, beyond those of :mod:`murano_cidr.operator.cmd.common`:
``2`` if the file holds invalid rows, ``1`` if rows conflict with live
allocations; nothing is written in either case unless
``--continue-on-error`` is given, and then the valid rows are written and
the exit code still says some were not.
"""

import contextlib
import importlib.util
import itertools
import json
import os
import stat
import sys
import textwrap

from murano_cidr.engine.drivers import capabilities
from murano_cidr.engine import pool
from murano_cidr.measuring import progress
from murano_cidr import messages
from murano_cidr.operator.cmd import common
from murano_cidr.operator.cmd import output
from murano_cidr.operator.cmd import store
from murano_cidr.operator.operations import importing
from murano_cidr.operator.operations import openstack_export

Capability = capabilities.Capability

PROG = "murano-cidr"
IMPORT_HEADERS = ("WHERE", "STATUS", "OWNER", "CIDR", "SCOPE", "REASON")
#: Rows ``import`` shows in its table, at most: the table's widths need
#: them in memory. ``--format json`` prints every row, one at a time.
SHOWN_ROWS = 1000


def register(subparsers):
    """Add ``import`` and ``convert-openstack``."""
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


def do_convert_openstack(conf):
    args = conf.command
    pools = pool.pools_from_conf(conf)
    result = openstack_export.convert(args.subnets, args.ports_dir, pools)
    for router, subnet, reason in result.skipped:
        print(messages.printable("%s: skipped subnet %s of router %s: %s"
                                 % (PROG, subnet, router, reason)),
              file=sys.stderr)
    output.emit(output.JSON, result.rows)
