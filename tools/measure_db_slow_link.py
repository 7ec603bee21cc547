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


"""Measure the ``db`` driver's calls on a slow link, by hand.

The figures of doc/source/admin/timeouts.rst for the first calls of new
processes at the library's default options. As root, from a source tree::

    python tools/measure_db_slow_link.py [--rtt SECONDS] [--clients N] \
        [mariadb|postgresql ...]

Each server runs in a network namespace of its own (the fault tests'
fixture) behind a TCP proxy that delays its replies by ``--rtt`` seconds
(2 by default). ``--clients`` new processes (3 by default), with no option
but the URL, make their first ``allocate`` at once in one scope, then a
second one each. Prints one line per call: its seconds and its outcome.
"""

import argparse
import multiprocessing
import sys
import tempfile

from murano_cidr.tests.functional.db import fault_workers
from murano_cidr.tests.functional.db import netns_servers
from murano_cidr.tests.functional import netns
from murano_cidr.tests.functional import slowlink

SERVERS = {"mariadb": netns_servers.MariadbServer,
           "postgresql": netns_servers.PostgresqlServer}


def measure(name, rtt, count):
    """Start ``name``'s server, then time ``count`` clients' calls."""
    server = SERVERS[name]()
    server.setUp()
    proxy = slowlink.DelayProxy(server.host.address, server.port, rtt)
    directory = tempfile.mkdtemp(prefix="measure-db-")
    context = multiprocessing.get_context("spawn")
    clients = []
    try:
        proxy.setUp()
        url = server.url_of("127.0.0.1", proxy.port)
        print("== %s (default options, %.1f s round trip, %d new "
              "processes)" % (name, rtt, count), flush=True)
        for i in range(count):
            commands, results = context.Queue(), context.Queue()
            # The event is kept: the child finds it by name when it starts.
            resume = context.Event()
            process = context.Process(
                target=fault_workers.serve,
                args=(url, {}, None, "c%d" % i, directory, commands, resume,
                      results))
            process.start()
            clients.append((process, commands, results, resume))
        for call in ("first allocate", "second allocate"):
            for i, (_, commands, _, _) in enumerate(clients):
                commands.put((fault_workers.ALLOCATE, "c%d-%s" % (i, call),
                              "r1"))
            for i, (_, _, results, _) in enumerate(clients):
                status, error, seconds, _ = results.get(timeout=900)
                print("c%d %-16s %6.1f s  %s"
                      % (i, call, seconds, error or status), flush=True)
        for _, commands, _, _ in clients:
            commands.put((fault_workers.STOP, None, None))
    finally:
        for process, _, _, _ in clients:
            process.join(30)
            if process.is_alive():
                process.kill()
        proxy.cleanUp()
        server.cleanUp()


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rtt", type=float, default=2.0,
                        help="seconds added to the round trip")
    parser.add_argument("--clients", type=int, default=3,
                        help="new processes calling at once")
    parser.add_argument("backend", nargs="*",
                        help="of %s (default: mariadb)"
                        % ", ".join(sorted(SERVERS)))
    args = parser.parse_args(argv)
    unknown = set(args.backend) - set(SERVERS)
    if unknown:
        parser.error("unknown backend: %s" % ", ".join(sorted(unknown)))
    reason = netns.missing()
    if reason:
        print("needs %s" % reason)
        return 2
    for name in args.backend or ["mariadb"]:
        measure(name, args.rtt, args.clients)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
