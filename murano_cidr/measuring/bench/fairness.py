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

"""How fairly the ``lock`` driver serves engines that share one scope.

W processes, each with its own ``lock`` driver on one lock service, start
together and each allocates (then releases) N CIDRs in one scope, as fast
as they can. What is measured is how long each process waits: for its
first allocation, at worst for any one allocation, and until its last::

    python -m murano_cidr.measuring.bench.fairness --server etcd \\
        --workers 6 --allocations 20

``--server etcd`` or ``--server zookeeper`` starts a private server on a
free loopback port (the functional tests' fixture; the binaries of
Debian's ``etcd-server`` or ``zookeeper``) and stops it at the end;
``--url`` measures a running service instead. ``--format json`` prints
the numbers for machines.
"""

import argparse
import json
import multiprocessing
import sys
import threading
import time
import uuid

from murano_cidr.engine import allocator
from murano_cidr import exceptions
from murano_cidr.operator import confutils
from murano_cidr import opts

#: Seconds a worker may take to start and to finish; never reached when
#: the lock service works.
WORKER_TIMEOUT = 600

#: 256 candidate /24s: far more than the workers hold at once, so no
#: allocation waits for a free CIDR, only for the lock.
POOL = {"pool_cidrs": "10.200.0.0/16", "subnet_prefixlen": 24}


def _worker(groups, scope, count, start, results):
    out = {"waits": [], "done": [], "errors": []}
    driver = None
    try:
        driver = allocator.get_allocator(confutils.make_conf(groups))
        # Connect before the start, so that only lock waits are measured.
        warm_up = uuid.uuid4().hex
        driver.allocate(warm_up, scope=scope + "-warm-up")
        driver.release(warm_up)
        start.wait(WORKER_TIMEOUT)
        for _ in range(count):
            owner = uuid.uuid4().hex
            began = time.monotonic()
            try:
                driver.allocate(owner, scope=scope)
            except exceptions.MuranoCidrException as e:
                out["errors"].append("%s: %s" % (type(e).__name__, e))
                continue
            ended = time.monotonic()
            out["waits"].append(ended - began)
            out["done"].append(ended)
            driver.release(owner)
    except Exception as e:
        out["errors"].append("%s: %s" % (type(e).__name__, e))
        start.abort()  # the others need not wait for this worker
    finally:
        if driver is not None:
            driver.close()
        results.put(out)


def measure(url, workers, allocations, lock_timeout=30):
    """Run the workers and return what they waited.

    :param url: the coordination URL.
    :param workers: W, processes allocating at once.
    :param allocations: N, allocations per process.
    :returns: a dictionary of seconds (see :func:`summary`).
    """
    groups = {opts.GROUP: dict(POOL, driver="lock", coordination_url=url,
                               lock_timeout=lock_timeout)}
    scope = "murano-cidr-fairness-" + uuid.uuid4().hex
    ctx = multiprocessing.get_context("spawn")
    # The workers and this process: all start at once.
    start = ctx.Barrier(workers + 1)
    results = ctx.Queue()
    procs = [ctx.Process(target=_worker, daemon=True,
                         args=(groups, scope, allocations, start, results))
             for _ in range(workers)]
    for proc in procs:
        proc.start()
    try:
        start.wait(WORKER_TIMEOUT)
    except threading.BrokenBarrierError:
        pass  # a worker failed; its error is in its output
    began = time.monotonic()
    outs = [results.get(timeout=WORKER_TIMEOUT) for _ in procs]
    for proc in procs:
        proc.join(30)
    return summary(outs, began, allocations)


def summary(outs, began, allocations):
    """Reduce the workers' outputs to the numbers printed.

    :returns: ``workers``, ``allocations``, ``errors``, ``seconds`` (until
        the last allocation), ``completion`` (each process's time to its
        last allocation, sorted), ``spread`` (slowest minus fastest
        completion), ``first_wait_max`` (the longest any process waited
        for its first allocation), ``wait_max`` and ``wait_p50`` (one
        allocation).
    """
    waits = sorted(w for out in outs for w in out["waits"])
    completion = sorted(round(max(out["done"]) - began, 3)
                        for out in outs if out["done"])
    firsts = [min(out["done"]) - began for out in outs if out["done"]]
    errors = [e for out in outs for e in out["errors"]]
    return {
        "workers": len(outs),
        "allocations": len(waits),
        "asked": len(outs) * allocations,
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "seconds": max(completion) if completion else None,
        "completion": completion,
        "spread": (completion[-1] - completion[0]) if completion else None,
        "first_wait_max": max(firsts) if firsts else None,
        "wait_max": waits[-1] if waits else None,
        "wait_p50": waits[len(waits) // 2] if waits else None,
    }


def _text(url, result):
    lines = ["lock service: %s" % url,
             "workers x allocations: %d x %d (%d done, %d errors)"
             % (result["workers"], result["asked"] // result["workers"],
                result["allocations"], result["errors"])]
    if result["first_error"]:
        lines.append("first error: %s" % result["first_error"])
    if result["completion"]:
        lines += [
            "per-process completion (s): %s"
            % " ".join("%.2f" % c for c in result["completion"]),
            "spread (slowest - fastest): %.2f s" % result["spread"],
            "longest wait for a first allocation: %.2f s"
            % result["first_wait_max"],
            "one allocation: p50 %.3f s, worst %.2f s"
            % (result["wait_p50"], result["wait_max"])]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m murano_cidr.measuring.bench.fairness",
        description="Measure how long engines sharing one scope wait for "
        "the lock driver's scope lock.")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="a running lock service's "
                       "coordination URL")
    where.add_argument("--server", choices=("etcd", "zookeeper"),
                       help="start a private server for the run")
    parser.add_argument("--workers", type=int, default=6)
    parser.add_argument("--allocations", type=int, default=20)
    parser.add_argument("--format", choices=("text", "json"),
                        default="text")
    args = parser.parse_args(argv)
    if args.workers < 1 or args.allocations < 1:
        parser.error("--workers and --allocations must be positive")
    server = None
    url = args.url
    if args.server:
        from murano_cidr.tests.functional.lock import servers
        server = (servers.EtcdServer() if args.server == "etcd"
                  else servers.ZooKeeperServer())
        if not server.available:
            print("the %s server is not installed" % server.name,
                  file=sys.stderr)
            return 2
        server.setUp()
        url = server.url
    try:
        result = measure(url, args.workers, args.allocations)
    finally:
        if server is not None:
            server.cleanUp()
    if args.format == "json":
        print(json.dumps(dict(result, url=url), sort_keys=True))
    else:
        print(_text(url, result))
    return 1 if result["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
