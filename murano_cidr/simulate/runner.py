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

"""K concurrent engines, as real processes, deploying against one router.

Each trial models K Murano engines deploying one environment each, at the
same time, under one tenant router:

1. every engine reads the router's CIDRs and allocates one with the
   configured driver (``taken`` is a callable reading the model router, so a
   driver that re-reads it at the moment it decides sees the same thing a
   real engine would);
2. a barrier holds all K engines until each has allocated: every engine has
   read the router before any creates its subnet, the window bug 1502437
   lives in;
3. each engine plugs its subnet into the model router, which refuses one
   that overlaps a subnet already there (a collision), confirms its
   allocation (which ends a ``lock`` reservation) and, once the trial is
   over, releases it.

The workers are started once, with ``spawn``, so each has its own
``PYTHONHASHSEED`` salt like a real engine, and serve every trial of every
driver. Every trial uses a new router (scope) and new owner ids (uuid4), so
trials are independent even though the processes persist.
"""

import contextlib
import dataclasses
import multiprocessing
import os
import queue
import random
import shutil
import tempfile
import typing
import uuid

from oslo_log import log as logging

from murano_cidr import allocator
from murano_cidr import confutils
from murano_cidr.drivers import base
from murano_cidr import exceptions
from murano_cidr import opts
from murano_cidr.simulate import router as router_mod
from murano_cidr.simulate import stats

LOG = logging.getLogger(__name__)

#: Seconds an engine waits at the barrier, or the runner for an engine,
#: before the run is declared stuck.
STEP_TIMEOUT = 120.0

#: The most concurrent engines a run may start: each is a process holding
#: a driver, and far more than any Murano deployment runs at once.
MAX_CONCURRENCY = 64

#: The pool options a simulation may set in ``[cidr_allocator]``.
POOL_OPTIONS = ("env_ip_template", "max_environments", "max_hosts",
                "pool_cidrs", "subnet_prefixlen")

OK = "ok"
COLLISION = "collision"
ERROR = "error"


@dataclasses.dataclass
class Spec(object):
    """What to simulate.

    :ivar drivers: driver names, in output order.
    :ivar ks: the numbers of concurrent engines to try.
    :ivar trials: trials per driver and K.
    :ivar pool: ``[cidr_allocator]`` pool options (see :data:`POOL_OPTIONS`);
        options left out keep their defaults.
    :ivar existing: networks already on the router before each trial.
    :ivar seed: seeds the existing networks, owner and router ids and the
        workers' hash salts; the ``random`` driver draws from the operating
        system and is never reproducible.
    :ivar config: extra configuration, ``{group: {option: value}}``, given
        to every driver (database URL, coordination URL...).
    """

    drivers: typing.List[str]
    ks: typing.List[int]
    trials: int
    pool: typing.Dict[str, typing.Any] = dataclasses.field(
        default_factory=dict)
    existing: int = 0
    seed: typing.Optional[int] = None
    config: typing.Dict[str, typing.Dict[str, typing.Any]] = (
        dataclasses.field(default_factory=dict))


@dataclasses.dataclass
class Result(object):
    """What one driver did at one K.

    A trial in which an engine failed says nothing about collisions (the
    failed engine never plugged its subnet in), so it is counted in
    :attr:`errors` only and left out of :attr:`probability`.

    :ivar trials: trials run, failed ones included.
    :ivar collided: completed trials in which at least one subnet was
        refused.
    :ivar refused: subnets refused by the router, over completed trials.
    :ivar errors: trials in which an engine raised instead of allocating,
        plugging or confirming.
    :ivar first_error: the first such error's message.
    """

    driver: str
    k: int
    trials: int
    pool_size: int
    existing: int
    collided: int = 0
    refused: int = 0
    errors: int = 0
    first_error: typing.Optional[str] = None

    @property
    def free(self):
        """Free slots each engine chooses from."""
        return self.pool_size - self.existing

    @property
    def completed(self):
        """Trials that ran to the end, the ones collisions are counted in."""
        return self.trials - self.errors

    @property
    def probability(self):
        """The measured collision probability, None if no trial completed."""
        if not self.completed:
            return None
        return self.collided / self.completed

    @property
    def interval(self):
        """The 95 % Wilson interval of :attr:`probability`.

        ``(None, None)`` if no trial completed.
        """
        if not self.completed:
            return (None, None)
        return stats.wilson_interval(self.collided, self.completed)

    @property
    def birthday(self):
        """The birthday bound for uniform picks among the free slots."""
        return stats.birthday_bound(self.k, self.free)

    def to_dict(self):
        """Return the result, with the derived figures, for JSON/CSV."""
        low, high = self.interval
        return {"driver": self.driver, "k": self.k, "trials": self.trials,
                "completed": self.completed, "pool_size": self.pool_size,
                "existing": self.existing, "free": self.free,
                "collided": self.collided,
                "refused": self.refused, "errors": self.errors,
                "probability": self.probability, "ci95_low": low,
                "ci95_high": high, "birthday_bound": self.birthday,
                "first_error": self.first_error}


def write_config(path, driver, spec, state_path):
    """Write the configuration file one driver's engines load.

    :param path: the file to write.
    :param driver: the driver name.
    :param spec: the :class:`Spec`.
    :param state_path: the driver's private state directory.
    """
    groups = {opts.GROUP: {"driver": driver, "state_path": state_path}}
    groups[opts.GROUP].update(spec.pool)
    for group, values in spec.config.items():
        groups.setdefault(group, {}).update(values)
    confutils.write(path, groups)


#: Read a file written by :func:`write_config`.
load_config = confutils.load


def prepare_driver(name, conf):
    """Create what a driver needs before engines use it (a schema).

    :param name: the driver name.
    :param conf: its configuration.
    """
    if name == "db":
        from murano_cidr.drivers.db import migration
        migration.upgrade(conf)


def _owner(rng):
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


# -- the engines ------------------------------------------------------------

def _engine_main(index, config_paths, barriers, tasks, results, router):
    """Serve trials until told to stop (runs in a worker process)."""
    drivers = {}
    try:
        while True:
            task = tasks.get()
            if task is None:
                break
            name, k, router_id, owner = task
            if name not in drivers:
                drivers[name] = allocator.get_allocator(
                    load_config(config_paths[name]))
            results.put((index,) + _deploy(drivers[name], barriers[k],
                                           router, router_id, owner))
    finally:
        for driver in drivers.values():
            with contextlib.suppress(Exception):
                driver.close()
        router.close()


def _deploy(driver, barrier, router, router_id, owner):
    """One engine deploying one environment; returns (outcome, detail)."""
    cidr = error = None
    try:
        cidr = driver.allocate(owner, scope=router_id,
                               taken=router.reader(router_id))
    except Exception as e:
        error = "%s: %s" % (type(e).__name__, e)
    # NOTE: wait even after an error, or the other engines would hang.
    barrier.wait(STEP_TIMEOUT)
    if cidr is None:
        return ERROR, error
    outcome = OK
    try:
        router.add_interface(router_id, owner, cidr)
        driver.confirm(owner)
    except router_mod.RouterInterfaceConflict:
        outcome = COLLISION
    except Exception as e:
        outcome, error = ERROR, "%s: %s" % (type(e).__name__, e)
    with contextlib.suppress(exceptions.MuranoCidrException):
        driver.release(owner)
    return outcome, error or cidr


@contextlib.contextmanager
def _hash_seed(value):
    """Set PYTHONHASHSEED for processes spawned inside the block."""
    if value is None:
        yield
        return
    old = os.environ.get("PYTHONHASHSEED")
    os.environ["PYTHONHASHSEED"] = str(value)
    try:
        yield
    finally:
        if old is None:
            del os.environ["PYTHONHASHSEED"]
        else:
            os.environ["PYTHONHASHSEED"] = old


class Runner(object):
    """Run a :class:`Spec`: the workers, the router, the trials.

    :param spec: what to simulate.
    :param progress: called with no argument after each trial.
    """

    def __init__(self, spec, progress=None):
        self.spec = spec
        self.progress = progress or (lambda: None)
        self.rng = random.Random(spec.seed)
        self._workdir = None
        self._workers = []
        self._tasks = []
        self._barriers = {}
        self._results = None

    def validate(self):
        """Check the spec and the drivers' configuration, before any work.

        :returns: the pool size.
        :raises murano_cidr.exceptions.InvalidArgument: for a bad spec.
        :raises murano_cidr.exceptions.InvalidConfig: for a bad pool.
        :raises murano_cidr.exceptions.DriverNotFound: for an unknown driver.
        """
        spec = self.spec
        if not spec.drivers:
            raise exceptions.InvalidArgument(
                name="drivers", value=spec.drivers, reason="is empty")
        if not spec.ks or any(k < 1 for k in spec.ks):
            raise exceptions.InvalidArgument(
                name="K", value=spec.ks,
                reason="must be one or more positive integers")
        if max(spec.ks) > MAX_CONCURRENCY:
            raise exceptions.InvalidArgument(
                name="K", value=max(spec.ks),
                reason="at most %d concurrent engines are supported (each "
                "is a process)" % MAX_CONCURRENCY)
        if spec.trials < 1:
            raise exceptions.InvalidArgument(
                name="trials", value=spec.trials, reason="must be positive")
        installed = allocator.installed_drivers()
        for name in spec.drivers:
            if name not in installed:
                raise exceptions.DriverNotFound(
                    name=name, available=", ".join(installed))
        size = self._pool().size
        if not 0 <= spec.existing < size:
            raise exceptions.InvalidArgument(
                name="existing", value=spec.existing,
                reason="must leave at least one of the pool's %d subnets "
                "free" % size)
        return size

    def run(self):
        """Run every trial.

        :returns: a list of :class:`Result`, by driver then K.
        :raises murano_cidr.exceptions.SimulationError: if an engine dies
            or hangs.
        """
        size = self.validate()
        pool = self._pool()
        self._workdir = tempfile.mkdtemp(prefix="murano-cidr-simulate-")
        try:
            config_paths = self._prepare_drivers()
            router = router_mod.ModelRouter.create(
                os.path.join(self._workdir, "router.sqlite"))
            self._start(config_paths, router)
            results = []
            for name in self.spec.drivers:
                for k in self.spec.ks:
                    result = Result(name, k, 0, size, self.spec.existing)
                    for _ in range(self.spec.trials):
                        self._trial(result, pool, router)
                        self.progress()
                    results.append(result)
            return results
        finally:
            self._stop()
            shutil.rmtree(self._workdir, ignore_errors=True)

    def _pool(self):
        # NOTE: through a file, as the engines read it; set_override would
        # leak into every ConfigOpts sharing the option group object.
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "pool.conf")
            write_config(path, self.spec.drivers[0], self.spec, tmp)
            return base.pools_from_conf(load_config(path))[4]

    def _prepare_drivers(self):
        paths = {}
        for name in self.spec.drivers:
            state_path = os.path.join(self._workdir, "state-" + name)
            os.makedirs(state_path)
            spec = self.spec
            if name == "db" and not _has_option(spec, "cidr_allocator_"
                                                "database", "connection"):
                spec = dataclasses.replace(spec, config=dict(spec.config))
                spec.config["cidr_allocator_database"] = dict(
                    spec.config.get("cidr_allocator_database", {}),
                    connection="sqlite:///" + os.path.join(state_path,
                                                           "db.sqlite"))
            path = os.path.join(self._workdir, name + ".conf")
            write_config(path, name, spec, state_path)
            conf = load_config(path)
            prepare_driver(name, conf)
            # Build it once here, so a bad option fails before any worker.
            allocator.get_allocator(conf).close()
            paths[name] = path
        return paths

    def _start(self, config_paths, router):
        ctx = multiprocessing.get_context("spawn")
        kmax = max(self.spec.ks)
        # NOTE: keep the barriers referenced until the workers stop: a
        # spawned worker unpickles them after start() returns, and a
        # collected barrier's semaphores are gone by then.
        self._barriers = barriers = {k: ctx.Barrier(k)
                                     for k in set(self.spec.ks)}
        self._results = ctx.Queue()
        for index in range(kmax):
            tasks = ctx.Queue()
            worker = ctx.Process(
                target=_engine_main, name="engine-%d" % index,
                args=(index, config_paths, barriers, tasks, self._results,
                      router),
                daemon=True)
            seed = None
            if self.spec.seed is not None:
                seed = (self.spec.seed * 7919 + index) % (2 ** 32 - 1)
            with _hash_seed(seed):
                worker.start()
            self._tasks.append(tasks)
            self._workers.append(worker)

    def _stop(self):
        for tasks in self._tasks:
            with contextlib.suppress(Exception):
                tasks.put(None)
        for worker in self._workers:
            worker.join(10)
            if worker.is_alive():
                worker.terminate()
                worker.join(5)
        self._workers, self._tasks, self._barriers = [], [], {}

    def _trial(self, result, pool, router):
        k = result.k
        router_id = "router-" + _owner(self.rng)
        if self.spec.existing:
            picks = self.rng.sample(range(pool.size), self.spec.existing)
            router.seed(router_id, [("existing-%d" % i, pool.cidr(i))
                                    for i in picks])
        for index in range(k):
            self._tasks[index].put((result.driver, k, router_id,
                                    _owner(self.rng)))
        outcomes = [self._collect() for _ in range(k)]
        router.delete(router_id)
        result.trials += 1
        errors = [detail for outcome, detail in outcomes if outcome == ERROR]
        if errors:
            # NOTE: not a "no collision": the failed engine never plugged a
            # subnet in, so the trial is left out of the probability.
            result.errors += 1
            if result.first_error is None:
                result.first_error = errors[0]
                LOG.debug("Driver %s failed at K=%d: %s", result.driver, k,
                          errors[0])
            return
        refused = sum(1 for outcome, _ in outcomes if outcome == COLLISION)
        result.refused += refused
        if refused:
            result.collided += 1

    def _collect(self):
        waited = 0.0
        while True:
            try:
                _index, outcome, detail = self._results.get(timeout=1.0)
                return outcome, detail
            except queue.Empty:
                waited += 1.0
                dead = [w.name for w in self._workers if not w.is_alive()]
                if dead:
                    raise exceptions.SimulationError(
                        reason="engine process %s died" % ", ".join(dead))
                if waited > STEP_TIMEOUT * 2:
                    raise exceptions.SimulationError(
                        reason="no engine answered for %d seconds" % waited)


def _has_option(spec, group, option):
    return spec.config.get(group, {}).get(option) is not None


def run(spec, progress=None):
    """Run a simulation; see :class:`Runner`.

    :param spec: a :class:`Spec`.
    :param progress: called after each trial.
    :returns: a list of :class:`Result`.
    """
    return Runner(spec, progress).run()
