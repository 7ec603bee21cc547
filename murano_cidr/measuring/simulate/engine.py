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


"""One Murano engine deploying environments, in a worker process.

The runner (:mod:`murano_cidr.measuring.simulate.runner`) starts the workers;
each serves trials from its task queue: allocate with ``taken`` read from
the model router, wait at the trial's barrier, plug the subnet in, confirm,
release, and report the outcome.
"""

import contextlib
import os

from murano_cidr.engine import allocator
from murano_cidr import exceptions
from murano_cidr.measuring.simulate import model
from murano_cidr.measuring.simulate import router as router_mod
from murano_cidr.measuring import workers
from murano_cidr.operator import confutils

#: Seconds an engine waits at the barrier, or the runner for an engine,
#: before the run is declared stuck.
STEP_TIMEOUT = 120.0

#: What an engine reports once it is up, before its first trial.
READY = "ready"


def serve(index, config_paths, barriers, tasks, results, router):
    """Serve trials until told to stop (the target of a worker process).

    Reports ``(index, READY, None)`` first, then ``(index, outcome,
    detail)`` for each task; a task is ``(driver, K, router id, owner)``,
    None stops the worker.

    :param index: the engine's number.
    :param config_paths: each driver's configuration file, by name.
    :param barriers: a barrier of K parties for each K.
    :param tasks: this engine's task queue.
    :param results: the queue shared by every engine.
    :param router: the
        :class:`~murano_cidr.measuring.simulate.router.ModelRouter`.
    """
    workers.serving()
    drivers = {}
    try:
        results.put((index, READY, None))
        while True:
            task = tasks.get()
            if task is None:
                break
            name, k, router_id, owner = task
            if name not in drivers:
                drivers[name] = workers.guarded(
                    allocator.get_allocator,
                    confutils.load(config_paths[name]))
            results.put((index,) + deploy(drivers[name], barriers[k],
                                          router, router_id, owner))
    finally:
        for driver in drivers.values():
            with contextlib.suppress(Exception):
                driver.close()
        router.close()


def deploy(driver, barrier, router, router_id, owner):
    """Deploy one environment, as a Murano engine would.

    :param driver: the engine's allocator.
    :param barrier: held by every engine of the trial between allocating
        and plugging the subnet in.
    :param router: the model router.
    :param router_id: the trial's router, the allocation's scope.
    :param owner: the network id.
    :returns: ``(outcome, detail)``: :data:`~model.OK` or
        :data:`~model.COLLISION` and the CIDR, or :data:`~model.ERROR` and
        the error.
    """
    cidr = error = None
    try:
        cidr = driver.allocate(owner, scope=router_id,
                               taken=router.reader(router_id))
    except Exception as e:
        error = "%s: %s" % (type(e).__name__, e)
    # NOTE: wait even after an error, or the other engines would hang.
    barrier.wait(STEP_TIMEOUT)
    if cidr is None:
        return model.ERROR, error
    outcome = model.OK
    try:
        router.add_interface(router_id, owner, cidr)
        driver.confirm(owner)
    except router_mod.RouterInterfaceConflict:
        outcome = model.COLLISION
    except Exception as e:
        outcome, error = model.ERROR, "%s: %s" % (type(e).__name__, e)
    with contextlib.suppress(exceptions.MuranoCidrException):
        driver.release(owner)
    return outcome, error or cidr


@contextlib.contextmanager
def hash_seed(value):
    """Set PYTHONHASHSEED for processes spawned inside the block.

    :param value: the seed, or None to leave the environment alone.
    """
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
