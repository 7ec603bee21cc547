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

"""What the concurrency tests run in their worker processes.

Each worker builds its own configuration and driver (nothing crosses the
process boundary but plain values), waits at the barrier so that all start
together, and reports what every call returned or raised.
"""

import logging
import os
import random

from oslo_config import cfg

from murano_cidr.engine import allocator
from murano_cidr.engine.drivers.db import options as db_options
from murano_cidr import exceptions
from murano_cidr.operator.drivers import commands
from murano_cidr import opts
from murano_cidr.tests.functional import history


def build_driver(url, settings, database_settings=None):
    """Build a db driver from a URL and ``[cidr_allocator]`` settings.

    :param database_settings: more ``[cidr_allocator_database]`` options.
    """
    conf = cfg.ConfigOpts()
    conf([], project="murano-cidr-test", default_config_files=[],
         default_config_dirs=[])
    commands.register_opts(conf)
    for name, value in settings.items():
        conf.set_override(name, value, group=opts.GROUP)
    for name, value in (database_settings or {}).items():
        conf.set_override(name, value, group=db_options.GROUP)
    conf.set_override("connection", url, group=db_options.GROUP)
    conf.set_override("sqlite_synchronous", False, group=db_options.GROUP)
    return allocator.get_allocator(conf)


def allocate_many(url, settings, scope, owners, seed, barrier, results):
    """Allocate ``owners`` (shuffled by ``seed``) in ``scope``.

    Puts on ``results`` a list of ``(owner, cidr, error)``: ``error`` is
    the name of a murano-cidr exception, or ``"UNHANDLED ..."`` for
    anything else.
    """
    owners = list(owners)
    random.Random(seed).shuffle(owners)
    outcome = []
    try:
        driver = build_driver(url, settings)
        barrier.wait()
        for owner in owners:
            try:
                outcome.append((owner, driver.allocate(owner, scope=scope),
                                None))
            except exceptions.MuranoCidrException as e:
                outcome.append((owner, None, type(e).__name__))
            except Exception as e:
                outcome.append((owner, None, "UNHANDLED %s: %s"
                                % (type(e).__name__, e)))
        driver.close()
    except Exception as e:
        outcome.append((None, None, "UNHANDLED %s: %s"
                        % (type(e).__name__, e)))
    results.put(outcome)


def churn(url, settings, scope, prefix, cycles, barrier, results):
    """Allocate and release ``cycles`` times, in ``scope``.

    Puts on ``results`` a dictionary: how many allocations succeeded, and
    how many raised each murano-cidr exception.
    """
    counts = {"allocated": 0}
    try:
        driver = build_driver(url, settings)
        barrier.wait()
        for i in range(cycles):
            owner = "%s-%d" % (prefix, i)
            try:
                driver.allocate(owner, scope=scope)
                counts["allocated"] += 1
            except exceptions.MuranoCidrException as e:
                name = type(e).__name__
                counts[name] = counts.get(name, 0) + 1
            driver.release(owner)
        driver.close()
    except Exception as e:
        counts["UNHANDLED"] = "%s: %s" % (type(e).__name__, e)
    results.put(counts)


def call(url, settings, method, args, barrier, results):
    """Call ``driver.<method>(*args)`` once; put what it returned."""
    try:
        driver = build_driver(url, settings)
        barrier.wait()
        outcome = getattr(driver, method)(*args)
        driver.close()
    except Exception as e:
        outcome = "UNHANDLED %s: %s" % (type(e).__name__, e)
    results.put(outcome)


#: The most steps :func:`allocate_through_failure` makes while it waits.
LIMIT = 20000


def _recorder(directory, name):
    """Return a recorder on ``directory``/``name``.jsonl.

    This process's log (oslo.db's "DB exceeded retry limit" tracebacks)
    goes beside it.
    """
    logging.basicConfig(filename=os.path.join(directory, name + ".log"),
                        level=logging.WARNING)
    return history.Recorder(os.path.join(directory, name + ".jsonl"), name)


def _recorded_steps(driver, recorder, name, scope, release_every=4):
    """Make steps, yielding the count after each.

    A step allocates an owner and confirms it, and releases every
    ``release_every``-th one at once (so CIDRs change hands during the
    run; 0: never).
    """
    n = 0
    while True:
        owner = "%s-n%d" % (name, n)
        if recorder.allocate(driver, owner, scope=scope) is not None:
            recorder.confirm(driver, owner)
            if release_every and n % release_every == release_every - 1:
                recorder.release(driver, owner)
        n += 1
        yield n


def allocate_recorded(url, settings, scope, name, directory, steps,
                      release_every, barrier, results):
    """Make ``steps`` steps (see :func:`_recorded_steps`), recorded.

    The history goes to ``directory``
    (:mod:`murano_cidr.tests.functional.history`).

    Puts the number of steps made on ``results``.
    """
    recorder = _recorder(directory, name)
    driver = build_driver(url, settings)
    barrier.wait()
    made = 0
    for made in _recorded_steps(driver, recorder, name, scope,
                                release_every):
        if made == steps:
            break
    driver.close()
    recorder.close()
    results.put(made)


def allocate_through_failure(url, settings, database_settings, scope, name,
                             directory, steps, progress, killed, restarted,
                             barrier, results):
    """Allocate, recorded, before, while and after a node is down.

    ``steps`` is three numbers of steps (see :func:`_recorded_steps`). The
    first, then ``(name, "ready")`` on ``progress`` (the test kills a node,
    then sets ``killed``); steps until ``killed`` is set and the second
    number more, then ``(name, "down")`` (the test restarts the node, then
    sets ``restarted``); steps until ``restarted`` is set and the third
    number more. Puts the number of steps made on ``results``.
    """
    recorder = _recorder(directory, name)
    driver = build_driver(url, settings, database_settings)
    stepper = _recorded_steps(driver, recorder, name, scope)
    barrier.wait()
    made = 0
    for phase, event, count in (("ready", None, steps[0]),
                                ("down", killed, steps[1]),
                                (None, restarted, steps[2])):
        # NOTE: bounded, should the test never set its event.
        while event is not None and not event.is_set() and made < LIMIT:
            made = next(stepper)
        for _ in range(count):
            made = next(stepper)
        if phase:
            progress.put((name, phase))
    driver.close()
    recorder.close()
    results.put(made)
