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

"""Run the benchmarks a command line asked for, and gather the results."""

import contextlib
import dataclasses
import os
import platform
import shutil
import tempfile
import typing

from oslo_log import log as logging

from murano_cidr.engine.drivers.db import options as db_options
from murano_cidr.engine.drivers import installed
from murano_cidr import exceptions
from murano_cidr.measuring.bench import backends as backends_mod
from murano_cidr.measuring.bench import drivers
from murano_cidr.measuring.bench import fillcost
from murano_cidr.measuring.bench import neutron_compare
from murano_cidr.measuring.bench import poolmath
from murano_cidr.measuring import cleanup
from murano_cidr.operator import confutils

LOG = logging.getLogger(__name__)


@dataclasses.dataclass
class Settings(object):
    """What to run.

    :ivar backends: backend names (:data:`backends.NAMES`).
    :ivar workers: W, processes allocating at once.
    :ivar allocations: N, allocations per process.
    :ivar samples: allocations timed per fill level, and baseline
        operations timed.
    :ivar pool_math: run the pool-math benchmarks and targets.
    :ivar neutron: time the ``db`` driver beside a model of Neutron's
        allocator on each database (:mod:`.neutron_compare`).
    :ivar repeat: timings per pool-math measurement.
    :ivar mysql_url: the database of ``db-mysql``.
    :ivar postgresql_url: the database of ``db-postgresql``.
    :ivar redis_url: the Redis server of ``lock-redis``.
    :ivar sqlite_url: the database of ``db-sqlite``; None for a fresh file
        in the run's directory.
    """

    backends: typing.List[str]
    workers: int = 4
    allocations: int = 100
    samples: int = 50
    pool_math: bool = True
    neutron: bool = True
    repeat: int = 3
    mysql_url: str = backends_mod.DEFAULT_MYSQL_URL
    postgresql_url: str = backends_mod.DEFAULT_POSTGRESQL_URL
    redis_url: str = backends_mod.DEFAULT_REDIS_URL
    sqlite_url: typing.Optional[str] = None

    def validate(self):
        """Check the settings before anything runs.

        :raises murano_cidr.exceptions.InvalidArgument: for a bad value.
        """
        unknown = [n for n in self.backends if n not in backends_mod.NAMES]
        if unknown:
            raise exceptions.InvalidArgument(
                name="backends", value=",".join(unknown),
                reason="unknown; choose among %s"
                % ", ".join(backends_mod.NAMES))
        for name in ("workers", "allocations", "samples", "repeat"):
            if not 1 <= getattr(self, name) <= LIMITS[name]:
                raise exceptions.InvalidArgument(
                    name=name, value=getattr(self, name),
                    reason="must be between 1 and %d" % LIMITS[name])
        pool = drivers.POOL["max_environments"]
        if self.workers * self.allocations > pool:
            raise exceptions.InvalidArgument(
                name="workers x allocations", value="%d x %d" % (
                    self.workers, self.allocations),
                reason="more than the %d subnets of the benchmark's pool"
                % pool)

    @property
    def steps(self):
        """How many times :func:`run` reports progress."""
        return len(self.backends) + (poolmath.STEPS if self.pool_math
                                     else 0)


#: The largest value of each size: what the benchmark's pool of 4,096
#: subnets and a run of hours at most allow.
LIMITS = {"workers": 256, "allocations": 4096, "samples": 10000,
          "repeat": 1000}


def _measure(backend, settings, workdir, databases):
    result = drivers.DriverResult(backend.name, backend.driver)
    if backend.driver not in installed.names():
        result.skipped = "the %s driver is not installed" % backend.driver
        return result
    state_path = os.path.join(workdir, backend.name)
    os.makedirs(state_path)
    if backend.name == "db-sqlite" and backend.url is None:
        url = "sqlite:///" + os.path.join(state_path, "bench.sqlite")
        backend = dataclasses.replace(
            backend, url=url,
            config={db_options.GROUP: {"connection": url}})
    reason = backend.probe()
    if reason:
        result.skipped = reason
        return result
    groups = backend.groups(drivers.POOL, state_path)
    conf = confutils.make_conf(groups)
    backend.prepare(conf)
    if backend.kind == backends_mod.SQL:
        # Its rows are removed at the end, however the run ends.
        databases.append(conf)
    baseline = backend.baseline(conf, settings.samples)
    if baseline:
        result.baseline_what, result.baseline = baseline
    drivers.throughput(result, groups, state_path, settings.workers,
                       settings.allocations)
    with contextlib.ExitStack() as stack:
        operation = None
        if backend.kind == backends_mod.SQL:
            operation = stack.enter_context(
                backends_mod.insert_operation(backend.url))
        result.fill_cost = [
            dataclasses.asdict(cost) for cost in
            fillcost.measure(groups, settings.samples, operation)]
    if backend.kind == backends_mod.SQL and settings.neutron:
        result.neutron = [
            cost.to_dict() for cost in neutron_compare.measure(
                groups, backend.url, settings.samples)]
    return result


def run(settings, progress=None):
    """Run the benchmarks.

    :param settings: the :class:`Settings`.
    :param progress: called with no argument after each step.
    :returns: a JSON-friendly dictionary: ``settings``, ``machine``,
        ``drivers`` (one entry per backend), ``pool_math`` and ``targets``.
    :raises murano_cidr.exceptions.InvalidArgument: for bad settings.
    """
    settings.validate()
    step = progress or (lambda: None)
    known = backends_mod.backends(settings.mysql_url,
                                  settings.postgresql_url,
                                  settings.redis_url, settings.sqlite_url)
    results = []
    workdir = tempfile.mkdtemp(prefix="murano-cidr-bench-")
    try:
        for name in settings.backends:
            try:
                with cleanup.removing(backends_mod.SCOPE_PREFIX) as dbs:
                    results.append(_measure(known[name], settings, workdir,
                                            dbs))
            except exceptions.BackendUnavailable as e:
                results.append(drivers.DriverResult(
                    name, known[name].driver, skipped=str(e)))
            step()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    targets = [t for r in results for t in fillcost.db_targets(r)]
    targets += [t for r in results for t in neutron_compare.targets(r)]
    measures = []
    if settings.pool_math:
        measures, pool_targets = poolmath.run(repeat=settings.repeat,
                                              progress=step)
        targets += pool_targets
    return {
        "settings": dataclasses.asdict(settings),
        "machine": {"python": platform.python_version(),
                    "cpus": os.cpu_count(),
                    "platform": platform.platform()},
        "drivers": [r.to_dict() for r in results],
        "pool_math": [m.to_dict() for m in measures],
        "targets": [t.to_dict() for t in targets],
    }
