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

A run leaves nothing behind, also when it fails or is interrupted: its
workers are stopped, its temporary directory (the model router, the
drivers' state) removed, and on a database given with ``--db-connection``
every row of its scopes deleted (:mod:`murano_cidr.measuring.cleanup`;
every router id starts with the run's prefix).
"""

import contextlib
import multiprocessing
import os
import queue
import random
import shutil
import tempfile
import uuid

from oslo_log import log as logging

from murano_cidr.engine import allocator
from murano_cidr.engine.drivers import installed
from murano_cidr.engine import pool as pool_mod
from murano_cidr import exceptions
from murano_cidr.measuring import cleanup
from murano_cidr.measuring import progress as progress_mod
from murano_cidr.measuring.simulate import engine
from murano_cidr.measuring.simulate import model
from murano_cidr.measuring.simulate import router as router_mod
from murano_cidr.measuring import workers as workers_mod
from murano_cidr.operator import confutils
from murano_cidr.operator.drivers import commands as driver_commands
from murano_cidr.operator import errors
from murano_cidr import opts

LOG = logging.getLogger(__name__)

#: The most concurrent engines a run may start: each is a process holding
#: a driver, and far more than any Murano deployment runs at once.
MAX_CONCURRENCY = 64

#: The pool options a simulation may set in ``[cidr_allocator]``.
POOL_OPTIONS = ("env_ip_template", "max_environments", "max_hosts",
                "pool_cidrs", "subnet_prefixlen")


def write_config(path, driver, spec, state_path):
    """Write the configuration file one driver's engines load.

    :param path: the file to write.
    :param driver: the driver name.
    :param spec: the :class:`~murano_cidr.measuring.simulate.model.Spec`.
    :param state_path: the driver's private state directory.
    """
    groups = {opts.GROUP: {"driver": driver, "state_path": state_path}}
    groups[opts.GROUP].update(spec.pool)
    for group, values in spec.config.items():
        groups.setdefault(group, {}).update(values)
    confutils.write(path, groups)


def prepare_driver(name, conf):
    """Create what a driver needs before engines use it (a schema).

    :param name: the driver name.
    :param conf: its configuration.
    """
    driver_commands.prepare(conf, name)


def _owner(rng):
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


class Runner(object):
    """Run a :class:`~murano_cidr.measuring.simulate.model.Spec`.

    :param spec: what to simulate.
    :param progress: a :class:`murano_cidr.measuring.progress.Progress`, or
        anything with a ``started()`` method (called once every engine is
        up) that is called with no argument after each trial.
    """

    def __init__(self, spec, progress=None):
        self.spec = spec
        self.progress = progress or progress_mod.Progress(0)
        self.rng = random.Random(spec.seed)
        self._workdir = None
        #: Every scope (router id) of the run starts with it.
        self.prefix = cleanup.run_prefix("simulate")
        self._databases = None
        self._workers = []
        self._tasks = []
        self._barriers = {}
        self._results = None

    def validate(self):
        """Check the spec and the drivers' configuration, before any work.

        :returns: the pool size.
        :raises murano_cidr.exceptions.InvalidArgument: for a bad spec, an
            unknown driver included.
        :raises murano_cidr.exceptions.InvalidConfig: for a bad pool.
        """
        spec = self.spec
        if not spec.drivers:
            raise exceptions.InvalidArgument(
                message="no driver to simulate: the list of drivers is empty")
        if not spec.ks or any(k < 1 for k in spec.ks):
            raise exceptions.InvalidArgument(
                name="K", value=",".join(str(k) for k in spec.ks),
                reason="must be one or more positive integers")
        if max(spec.ks) > MAX_CONCURRENCY:
            raise exceptions.InvalidArgument(
                name="K", value=max(spec.ks),
                reason="at most %d concurrent engines are supported (each "
                "is a process)" % MAX_CONCURRENCY)
        if spec.trials < 1:
            raise exceptions.InvalidArgument(
                name="trials", value=spec.trials, reason="must be positive")
        names = installed.names()
        for name in spec.drivers:
            if name not in names:
                raise exceptions.InvalidArgument(
                    name="driver to simulate", value=name,
                    reason="no allocator driver of that name is installed "
                    "(--drivers); installed drivers: %s" % ", ".join(names))
        size = self._pool().size
        if not 0 <= spec.existing < size:
            raise exceptions.InvalidArgument(
                name="existing", value=spec.existing,
                reason="must leave at least one of the pool's %d subnets "
                "free" % size)
        return size

    def run(self):
        """Run every trial.

        :returns: a list of
            :class:`~murano_cidr.measuring.simulate.model.Result`,
            by driver then K.
        :raises murano_cidr.operator.errors.SimulationError: if an engine dies
            or hangs.
        """
        size = self.validate()
        pool = self._pool()
        self._workdir = tempfile.mkdtemp(prefix="murano-cidr-simulate-")
        with self._cleaning_up():
            config_paths = self._prepare_drivers()
            router = router_mod.ModelRouter.create(
                os.path.join(self._workdir, "router.sqlite"))
            self._start(config_paths, router)
            self.progress.started()
            results = []
            for name in self.spec.drivers:
                for k in self.spec.ks:
                    result = model.Result(name, k, 0, size,
                                          self.spec.existing)
                    for _ in range(self.spec.trials):
                        self._trial(result, pool, router)
                        self.progress()
                    results.append(result)
            self._stop()
            return results

    @contextlib.contextmanager
    def _cleaning_up(self):
        try:
            # NOTE: the workers end first, so none writes after the rows
            # are removed.
            with cleanup.removing(self.prefix, self._end) as databases:
                self._databases = databases
                yield
        finally:
            shutil.rmtree(self._workdir, ignore_errors=True)

    def _end(self):
        workers_mod.stop(self._workers)
        self._workers, self._tasks, self._barriers = [], [], {}

    def _pool(self):
        # NOTE: through a file, as the engines read it; set_override would
        # leak into every ConfigOpts sharing the option group object.
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "pool.conf")
            write_config(path, self.spec.drivers[0], self.spec, tmp)
            return pool_mod.pools_from_conf(confutils.load(path))[4]

    def _prepare_drivers(self):
        paths = {}
        for name in self.spec.drivers:
            state_path = os.path.join(self._workdir, "state-" + name)
            os.makedirs(state_path)
            # NOTE: each driver's state (the db driver's default SQLite
            # file, the lock driver's lock files) goes under its own
            # state_path, so drivers compared in one run share nothing.
            path = os.path.join(self._workdir, name + ".conf")
            write_config(path, name, self.spec, state_path)
            conf = confutils.load(path)
            prepare_driver(name, conf)
            if name == "db":
                self._databases.append(conf)
            # Build it once here, so a bad option fails before any worker.
            allocator.get_allocator(conf).close()
            paths[name] = path
        return paths

    def _start(self, config_paths, router):
        with workers_mod.starting():
            self._spawn(config_paths, router)
        # NOTE: wait until every engine has imported the library, so the
        # first trial (and the progress bar's first rate) measures trials.
        for _ in self._workers:
            self._collect()

    def _spawn(self, config_paths, router):
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
                target=engine.serve, name="engine-%d" % index,
                args=(index, config_paths, barriers, tasks, self._results,
                      router),
                daemon=True)
            seed = None
            if self.spec.seed is not None:
                seed = (self.spec.seed * 7919 + index) % (2 ** 32 - 1)
            with engine.hash_seed(seed):
                worker.start()
            self._tasks.append(tasks)
            self._workers.append(worker)

    def _stop(self):
        # The end of a run: each engine closes its driver and exits.
        for tasks in self._tasks:
            tasks.put(None)
        for worker in self._workers:
            worker.join(10)

    def _trial(self, result, pool, router):
        k = result.k
        router_id = self.prefix + _owner(self.rng)
        if self.spec.existing:
            picks = self.rng.sample(range(pool.size), self.spec.existing)
            router.seed(router_id, [("existing-%d" % i, pool.cidr(i))
                                    for i in picks])
        for index in range(k):
            self._tasks[index].put((result.driver, k, router_id,
                                    _owner(self.rng)))
        outcomes = [self._collect() for _ in range(k)]
        router.delete(router_id)
        error = result.record(outcomes)
        if error is not None:
            LOG.debug("Driver %s failed at K=%d: %s", result.driver, k,
                      error)

    def _collect(self):
        return collect(self._results, self._workers)


def collect(results, workers, poll=1.0, timeout=engine.STEP_TIMEOUT * 2):
    """Wait for the next report of an engine.

    :param results: the queue the engines report on.
    :param workers: the engines' processes, watched while waiting.
    :param poll: seconds between two looks at the processes.
    :param timeout: seconds without any report before giving up.
    :returns: ``(outcome, detail)``.
    :raises murano_cidr.operator.errors.SimulationError: if an engine process
        died, or none reported for ``timeout`` seconds.
    """
    waited = 0.0
    while True:
        try:
            _index, outcome, detail = results.get(timeout=poll)
            return outcome, detail
        except queue.Empty:
            waited += poll
            dead = [w.name for w in workers if not w.is_alive()]
            if dead:
                raise errors.SimulationError(
                    reason="engine process %s died" % ", ".join(dead))
            if waited > timeout:
                raise errors.SimulationError(
                    reason="no engine answered for %d seconds" % waited)


def run(spec, progress=None):
    """Run a simulation; see :class:`Runner`.

    :param spec: a :class:`~murano_cidr.measuring.simulate.model.Spec`.
    :param progress: see :class:`Runner`.
    :returns: a list of :class:`~murano_cidr.measuring.simulate.model.Result`.
    """
    return Runner(spec, progress).run()
