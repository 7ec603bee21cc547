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

"""``murano-cidr simulate``: measure collision rates of concurrent engines.

Example, the published numbers of bug 1502437 and the fixes beside them::

    murano-cidr simulate --drivers legacy,random --max-environments 20 \\
        -k 2,10 --trials 2000
"""

import argparse
import logging as std_logging
import os
import sys

from murano_cidr.engine.drivers import installed
from murano_cidr import exceptions
from murano_cidr import measuring
from murano_cidr.measuring import progress
from murano_cidr.measuring.simulate import model
from murano_cidr.measuring.simulate import plot
from murano_cidr.measuring.simulate import report
from murano_cidr.measuring.simulate import runner
from murano_cidr.operator.cmd import common
from murano_cidr.operator.cmd import tool_options
from murano_cidr import opts

PROG = "murano-cidr simulate"


def int_list(value):
    """Parse ``"2,5,10"`` into ``[2, 5, 10]`` (an argparse type).

    :param value: the command-line string.
    :returns: a list of integers.
    :raises argparse.ArgumentTypeError: if an item is not an integer, so
        argparse prints a usage error naming the option.
    """
    try:
        return [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            "expected integers separated by commas, got %r" % value)


def name_list(value):
    """Parse ``"legacy,random"`` into ``["legacy", "random"]``."""
    return [v.strip() for v in value.split(",") if v.strip()]


def quiet_library_logs(conf):
    """Keep the drivers' and alembic's INFO lines out of a long run.

    Drivers log every allocation at INFO, alembic every step of the schema
    it creates: thousands of lines that would bury the results. ``--debug``
    keeps them.
    """
    if not conf.debug:
        for name in ("murano_cidr.engine.drivers", "alembic"):
            std_logging.getLogger(name).setLevel(std_logging.WARNING)


def check_plot_path(path):
    """Make sure the plot can be written, before hours of trials.

    :param path: the ``--plot`` file.
    :raises murano_cidr.exceptions.InvalidArgument: if its directory does
        not exist or is not writable, or the path is a directory.
    """
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        reason = "is a directory"
    elif not os.path.isdir(directory):
        reason = "directory %s does not exist" % directory
    elif not os.access(directory, os.W_OK):
        reason = "directory %s is not writable" % directory
    else:
        return
    raise exceptions.InvalidArgument(name="--plot file", value=path,
                                     reason=reason)


def first_failure(results):
    """Return the first result with failed trials, or None.

    :param results: a list of
        :class:`~murano_cidr.measuring.simulate.model.Result`.
    """
    return next((r for r in results if r.errors), None)


def register(subparsers):
    """Add the ``simulate`` command."""
    parser = subparsers.add_parser(
        "simulate",
        help="Run K concurrent engines against a model router and print "
        "collision rates beside the birthday bound.")
    parser.add_argument(
        "--drivers", type=name_list, metavar="NAME[,NAME...]",
        help="Drivers to measure (default: every installed driver).")
    parser.add_argument(
        "-k", "--concurrency", type=int_list, default=[2, 5, 10],
        metavar="K[,K...]", dest="ks",
        help="Numbers of concurrent deployments, at most %d (default: "
        "2,5,10)." % runner.MAX_CONCURRENCY)
    parser.add_argument("--trials", type=int, default=1000, metavar="N",
                        help="Trials per driver and K (default: 1000).")
    parser.add_argument(
        "--existing", type=int, default=0, metavar="N",
        help="Networks already on the router, placed at random in the "
        "pool anew for each trial (default: 0).")
    parser.add_argument("--seed", type=int, metavar="N",
                        help="Seed for reproducible routers, owners and "
                        "hash salts (the random driver is never seeded).")
    pool = parser.add_argument_group(
        "pool", "The pool the engines allocate from, as [cidr_allocator] "
        "options; each one not given comes from the configuration file. "
        "--env-ip-template or --max-environments on the command line win "
        "over a configured --pool-cidrs.")
    pool.add_argument("--env-ip-template", metavar="ADDRESS",
                      help="First address of Murano's pool, e.g. 10.0.0.0.")
    pool.add_argument("--max-environments", type=int, metavar="N",
                      help="Environments of Murano's pool: 2^ceil(log2 N) "
                      "subnets.")
    pool.add_argument("--max-hosts", type=int, metavar="N",
                      help="Hosts per environment: sets the subnets' size.")
    pool.add_argument("--pool-cidrs", type=name_list, metavar="CIDR[,...]",
                      help="An explicit pool instead of Murano's, with "
                      "--subnet-prefixlen.")
    pool.add_argument("--subnet-prefixlen", type=int, metavar="N",
                      help="Prefix length of the subnets cut from "
                      "--pool-cidrs, e.g. 24.")
    tool_options.add_service_arguments(
        parser, "simulate",
        db_help="Database of the db driver (default: a fresh SQLite file "
        "for the run).",
        coordination_help="tooz backend of the lock driver, e.g. "
        "redis://127.0.0.1:6379 (default: file locks in a private "
        "directory).")
    tool_options.add_format_argument(parser)
    parser.add_argument("--plot", metavar="FILE.png",
                        help="Also draw P(collision) against K per driver "
                        "(needs the 'simulate' extra: matplotlib).")
    parser.add_argument("--quiet", action="store_true",
                        help="No progress bar.")
    parser.set_defaults(action=do_simulate)


def build_spec(conf):
    """Turn the command line and configuration into a runner Spec.

    :param conf: the parsed configuration, with ``conf.command`` holding the
        command's arguments.
    :returns: a :class:`~murano_cidr.measuring.simulate.model.Spec`.
    """
    args = conf.command
    group = conf[opts.GROUP]
    pool = {}
    for option in runner.POOL_OPTIONS:
        value = getattr(args, option)
        if value is None:
            value = group[option]
        if value not in (None, []):
            pool[option] = value
    murano_given = any(getattr(args, option) is not None for option in
                       ("env_ip_template", "max_environments"))
    if args.pool_cidrs is None and murano_given:
        # Murano's options on the command line win over a configured
        # explicit pool.
        pool.pop("pool_cidrs", None)
        pool.pop("subnet_prefixlen", None)
    extra = {}
    if args.db_connection:
        extra["cidr_allocator_database"] = {"connection": args.db_connection}
    if args.coordination_url:
        extra[opts.GROUP] = {"coordination_url": args.coordination_url}
    return model.Spec(drivers=args.drivers or installed.names(),
                      ks=args.ks, trials=args.trials, pool=pool,
                      existing=args.existing, seed=args.seed, config=extra)


def do_simulate(conf):
    """Run the simulation and print its results.

    Exits 1, naming the driver and its first error, if any trial failed.
    """
    args = conf.command
    quiet_library_logs(conf)
    spec = build_spec(conf)
    # Fail before the run, not after it.
    if progress.wanted(args.quiet):
        measuring.require(PROG, "simulate", "tqdm")
    if args.plot:
        check_plot_path(args.plot)
        plot.pyplot()
    sim = runner.Runner(spec)
    sim.validate()
    total = len(spec.drivers) * len(spec.ks) * spec.trials
    with progress.progress(total, quiet=args.quiet) as step:
        sim.progress = step
        results = sim.run()
    print(report.render(results, args.format, spec))
    if args.plot:
        plot.plot(results, args.plot, spec)
        print("plot written to %s" % args.plot, file=sys.stderr)
    failed = first_failure(results)
    if failed is not None:
        common.error("driver %s failed in %d of %d trial(s) at K=%d, left "
                     "out of its collision rate; first error: %s"
                     % (failed.driver, failed.errors, failed.trials,
                        failed.k, failed.first_error))
        return common.EXIT_FAILED
    return common.EXIT_OK
