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

"""Driver benchmarks: throughput, latency, collisions.

Throughput: W worker processes each deploy N environments under one router
(one scope), as engines would: allocate with ``taken`` read from a model
router (:mod:`murano_cidr.measuring.simulate.router`), plug the subnet into it,
confirm. Latency is the time of ``allocate`` plus ``confirm``; throughput
is all allocations over the wall time of the whole run, plugging included.
Collisions are counted after the run, over every CIDR handed out.

The cost as the pool fills is :mod:`murano_cidr.measuring.bench.fillcost`'s;
the ``db`` driver beside Neutron's allocator
:mod:`murano_cidr.measuring.bench.neutron_compare`'s.
"""

import contextlib
import dataclasses
import multiprocessing
import os
import time
import typing
import uuid

from oslo_log import log as logging

from murano_cidr.engine import allocator
from murano_cidr.engine import taken as taken_mod
from murano_cidr import exceptions
from murano_cidr.measuring.bench import backends
from murano_cidr.measuring.bench import timing
from murano_cidr.measuring.simulate import router as router_mod
from murano_cidr.measuring import workers as workers_mod
from murano_cidr.operator import confutils

LOG = logging.getLogger(__name__)

#: The pool of every driver benchmark: 4,096 /24s under 10.0.0.0/12.
POOL = {"env_ip_template": "10.0.0.0", "max_environments": 4096,
        "max_hosts": 250}

#: Seconds to wait for a worker before declaring the run stuck.
WORKER_TIMEOUT = 600.0


@dataclasses.dataclass
class DriverResult(object):
    """What one backend did; ``skipped`` says why it was not measured."""

    backend: str
    driver: str
    skipped: typing.Optional[str] = None
    workers: int = 0
    allocations: int = 0
    seconds: float = 0.0
    p50: float = 0.0
    p99: float = 0.0
    collisions: int = 0
    errors: int = 0
    first_error: typing.Optional[str] = None
    baseline_what: typing.Optional[str] = None
    baseline: typing.Optional[float] = None
    fill_cost: typing.List[typing.Dict[str, typing.Any]] = (
        dataclasses.field(default_factory=list))
    neutron: typing.List[typing.Dict[str, typing.Any]] = (
        dataclasses.field(default_factory=list))

    @property
    def throughput(self):
        """Allocations per second over the whole run."""
        return self.allocations / self.seconds if self.seconds else 0.0

    @property
    def p50_ratio(self):
        """Median latency over the baseline operation, if any."""
        if self.baseline:
            return self.p50 / self.baseline
        return None

    def to_dict(self):
        result = dataclasses.asdict(self)
        result["throughput"] = self.throughput
        result["p50_over_baseline"] = self.p50_ratio
        return result


def count_collisions(cidrs):
    """Count the CIDRs that overlap another one of the list.

    :param cidrs: CIDR strings handed out in one scope.
    :returns: how many of them overlap an earlier one (by first address),
        so N copies of one CIDR count N - 1.
    """
    ranges = sorted((n.first, n.last) for n in
                    (taken_mod.parse_cidr(c) for c in cidrs))
    collisions = 0
    reach = None
    for first, last in ranges:
        if reach is not None and first <= reach:
            collisions += 1
        reach = last if reach is None else max(reach, last)
    return collisions


def _worker(groups, router_path, scope, count, barrier, results):
    """Deploy ``count`` environments; runs in a worker process."""
    workers_mod.serving()
    out = {"latencies": [], "cidrs": [], "errors": [], "start": 0.0,
           "end": 0.0}
    driver = None
    owners = []
    try:
        driver = workers_mod.guarded(allocator.get_allocator,
                                     confutils.make_conf(groups))
        router = router_mod.ModelRouter(router_path)
        reader = router.reader(scope)
        barrier.wait(WORKER_TIMEOUT)
        out["start"] = time.perf_counter()
        for _ in range(count):
            owner = str(uuid.uuid4())
            try:
                start = time.perf_counter()
                cidr = driver.allocate(owner, scope=scope, taken=reader)
                allocated = time.perf_counter()
                owners.append(owner)
                out["cidrs"].append(cidr)
                try:
                    router.add_interface(scope, owner, cidr)
                except router_mod.RouterInterfaceConflict:
                    pass
                plugged = time.perf_counter()
                driver.confirm(owner)
                out["latencies"].append(
                    allocated - start + time.perf_counter() - plugged)
            except exceptions.MuranoCidrException as e:
                out["errors"].append("%s: %s" % (type(e).__name__, e))
        out["end"] = time.perf_counter()
        for owner in owners:
            driver.release(owner)
    except Exception as e:
        out["errors"].append("%s: %s" % (type(e).__name__, e))
    finally:
        if driver is not None:
            with contextlib.suppress(Exception):
                driver.close()
        results.put(out)


def throughput(result, groups, workdir, workers, count):
    """Run W workers x N allocations and fill in ``result``.

    :param result: the :class:`DriverResult` to complete.
    :param groups: the driver's configuration, ``{group: {option: value}}``.
    :param workdir: a private directory (the model router lives there).
    :param workers: W, the number of processes.
    :param count: N, allocations per process.
    """
    scope = backends.new_scope()
    ctx = multiprocessing.get_context("spawn")
    router_path = os.path.join(workdir, "router-%s.sqlite" % scope)
    router_mod.ModelRouter.create(router_path)
    procs = []
    try:
        with workers_mod.starting():
            barrier = ctx.Barrier(workers)
            results = ctx.Queue()
            procs = [ctx.Process(target=_worker, daemon=True,
                                 args=(groups, router_path, scope, count,
                                       barrier, results))
                     for _ in range(workers)]
            for proc in procs:
                proc.start()
        outs = [results.get(timeout=WORKER_TIMEOUT) for _ in procs]
        for proc in procs:
            proc.join(30)
    finally:
        workers_mod.stop(procs)
    latencies = [x for out in outs for x in out["latencies"]]
    errors = [e for out in outs for e in out["errors"]]
    result.workers = workers
    result.allocations = len(latencies)
    result.errors = len(errors)
    result.first_error = errors[0] if errors else None
    if latencies:
        result.p50 = timing.percentile(latencies, 0.5)
        result.p99 = timing.percentile(latencies, 0.99)
        result.seconds = (max(o["end"] for o in outs if o["end"])
                          - min(o["start"] for o in outs if o["start"]))
    result.collisions = count_collisions(
        [c for out in outs for c in out["cidrs"]])
