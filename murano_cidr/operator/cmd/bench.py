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

"""``murano-cidr bench``: throughput, latency and pool-math benchmarks.

Example, the short run of ``tox -e bench``::

    murano-cidr bench --workers 2 --allocations 50 --samples 20
"""

from murano_cidr import exceptions
from murano_cidr import measuring
from murano_cidr.measuring.bench import backends
from murano_cidr.measuring.bench import report
from murano_cidr.measuring.bench import runner
from murano_cidr.measuring import progress
from murano_cidr import messages
from murano_cidr.operator.cmd import common
from murano_cidr.operator.cmd import simulate
from murano_cidr.operator.cmd import tool_options

PROG = "murano-cidr bench"


def register(subparsers):
    """Add the ``bench`` command."""
    parser = subparsers.add_parser(
        "bench",
        help="Benchmark every driver and backend, and the pool math; "
        "unreachable services are skipped and said so.")
    parser.add_argument(
        "--backends", type=simulate.name_list,
        default=list(backends.NAMES), metavar="NAME[,NAME...]",
        help="Among %s (default: all)." % ", ".join(backends.NAMES))
    limits = runner.LIMITS
    parser.add_argument("--workers", type=int, default=4,
                        help="W, processes allocating at once (default 4, "
                        "at most %d)." % limits["workers"])
    parser.add_argument("--allocations", type=int, default=100,
                        help="N, allocations per worker (default 100, at "
                        "most %d; W x N at most the pool's %d subnets)."
                        % (limits["allocations"], limits["allocations"]))
    parser.add_argument("--samples", type=int, default=50,
                        help="Allocations timed per fill level, and "
                        "baseline operations timed (default 50, at most "
                        "%d)." % limits["samples"])
    parser.add_argument("--repeat", type=int, default=3,
                        help="Timings per pool-math measurement; the "
                        "median is kept (default 3, at most %d)."
                        % limits["repeat"])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--no-pool-math", action="store_true",
                       help="Skip the pool-math benchmarks and targets.")
    which.add_argument("--pool-math-only", action="store_true",
                       help="Only the pool-math benchmarks and targets.")
    parser.add_argument("--no-neutron", action="store_true",
                        help="Skip the db driver's turns beside a model of "
                        "Neutron's allocator (256 and 10,000 live "
                        "allocations, on each database).")
    tool_options.add_service_arguments(
        parser, "bench", repeat=True,
        db_help="A database to measure the db driver on, in place of the "
        "default of its kind: SQLite (a fresh file), MySQL (%s) or "
        "PostgreSQL (%s); repeat for several kinds."
        % (messages.safe_url(backends.DEFAULT_MYSQL_URL),
           messages.safe_url(backends.DEFAULT_POSTGRESQL_URL)),
        coordination_help="The Redis URL the lock-redis backend measures "
        "the lock driver on (default: %s)." % backends.DEFAULT_REDIS_URL)
    deprecated = parser.add_argument_group(
        "deprecated", "Still accepted; use --db-connection and "
        "--coordination-url.")
    deprecated.add_argument("--mysql-url", metavar="URL",
                            help="Use --db-connection.")
    deprecated.add_argument("--postgresql-url", metavar="URL",
                            help="Use --db-connection.")
    deprecated.add_argument("--redis-url", metavar="URL",
                            help="Use --coordination-url.")
    tool_options.add_format_argument(parser)
    parser.add_argument("--quiet", action="store_true",
                        help="No progress bar.")
    parser.set_defaults(action=do_bench)


def service_urls(args):
    """Return the URLs the backends measure, from the command line.

    :param args: the parsed ``bench`` arguments.
    :returns: ``(mysql URL, postgresql URL, redis URL, sqlite URL or
        None)``.
    :raises murano_cidr.exceptions.InvalidArgument: for a database URL of
        no kind the benchmark measures, or a coordination URL that is not
        Redis.
    """
    urls = {"mysql": args.mysql_url or backends.DEFAULT_MYSQL_URL,
            "postgresql": (args.postgresql_url
                           or backends.DEFAULT_POSTGRESQL_URL),
            "sqlite": None}
    for url in args.db_connection or ():
        kind = backends.database_kind(url)
        if kind is None:
            raise exceptions.InvalidArgument(
                name="--db-connection", value=url,
                reason="is not an SQLite, MySQL or PostgreSQL URL")
        urls[kind] = url
    redis_url = (args.coordination_url or args.redis_url
                 or backends.DEFAULT_REDIS_URL)
    if not redis_url.startswith(("redis://", "rediss://")):
        raise exceptions.InvalidArgument(
            name="--coordination-url", value=redis_url,
            reason="bench measures the lock driver's tooz backend on Redis "
            "(lock-redis); 'murano-cidr simulate --coordination-url' takes "
            "any tooz URL")
    return urls["mysql"], urls["postgresql"], redis_url, urls["sqlite"]


def do_bench(conf):
    """Run the benchmarks chosen on the command line and print a report.

    :returns: :data:`~murano_cidr.operator.cmd.common.EXIT_FAILED` if a target
        failed (the report says which), else success.
    """
    args = conf.command
    mysql_url, postgresql_url, redis_url, sqlite_url = service_urls(args)
    settings = runner.Settings(
        backends=[] if args.pool_math_only else args.backends,
        workers=args.workers, allocations=args.allocations,
        samples=args.samples, pool_math=not args.no_pool_math,
        neutron=not args.no_neutron,
        repeat=args.repeat, mysql_url=mysql_url,
        postgresql_url=postgresql_url, redis_url=redis_url,
        sqlite_url=sqlite_url)
    settings.validate()
    if progress.wanted(args.quiet):
        measuring.require(PROG, "bench", "tqdm")
    simulate.quiet_library_logs(conf)
    with progress.progress(settings.steps, quiet=args.quiet,
                           description="steps") as step:
        step.started()
        doc = runner.run(settings, progress=step)
    print(report.render(doc, args.format))
    failed = [t["name"] for t in doc["targets"] if not t["passed"]]
    if failed:
        common.error("%d of %d targets failed: %s" % (
            len(failed), len(doc["targets"]), ", ".join(failed)), PROG)
        return common.EXIT_FAILED
    return common.EXIT_OK
