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

"""Engines for the concurrency tests: each runs in its own process.

They are started with the ``spawn`` method, so each builds its allocator
from scratch, as a real engine does (a tooz heartbeat thread would not
survive a fork).
"""

import collections
import os
import threading
import time

from oslo_config import cfg

from murano_cidr.engine import allocator
from murano_cidr.measuring.simulate import router as router_mod
from murano_cidr.operator.drivers import commands
from murano_cidr import opts
from murano_cidr.tests.functional import history
from murano_cidr.tests.functional import netns
from murano_cidr.tests.functional import netns_reaper
from murano_cidr.tests.functional import runtimes

#: How long a worker keeps trying while the lock service is down.
OUTAGE_DEADLINE = 120
#: What :func:`serve` says once its allocator is built.
READY = "ready"


def build_allocator(settings, lock_path=None):
    """Build the ``lock`` driver the way a service does, from a ConfigOpts.

    :param settings: ``[cidr_allocator]`` options, as a dictionary.
    :param lock_path: ``[oslo_concurrency] lock_path``, if any.
    """
    conf = cfg.ConfigOpts()
    commands.register_opts(conf)
    conf([], project="murano-cidr", default_config_files=[])
    for name, value in settings.items():
        conf.set_override(name, value, group=opts.GROUP)
    if lock_path is not None:
        conf.set_override("lock_path", lock_path, group="oslo_concurrency")
    return allocator.get_allocator(conf)


class EngineError(Exception):
    """A call of an engine ended in an error it does not handle."""


def deploy(driver, routers, router, prefix, count, keep, counters,
           recorder=None, hold=0, stop=None, retried=("LockUnavailable",),
           plug_late=False):
    """Deploy ``count`` networks on ``router``, keeping ``keep`` alive.

    Each deployment allocates a CIDR, plugs the subnet into the model
    router while it holds the reservation, then confirms; the oldest
    network is released, then deleted, once more than ``keep`` are alive
    (so that no other engine can be given its CIDR before the release
    ended, as the history checker's strict reading requires). A refused
    plug is a collision. While the lock service is down, allocations fail
    and are tried again.

    :param counters: a :class:`collections.Counter` updated in place.
    :param recorder: a :class:`~murano_cidr.tests.functional.history.
        Recorder` of the calls; one in memory if None.
    :param hold: seconds each reservation is held between the plug and
        the confirm (Neutron's time to create the subnet).
    :param stop: an event that ends the deployments early once set.
    :param retried: the errors of ``allocate`` tried again, with pauses.
    :param plug_late: plug the subnet after ``hold``, as Heat creates it
        some time after the engine got its CIDR (the reservation alone
        keeps other engines off it meanwhile), rather than at once.
    :raises EngineError: for an error other than those ``retried`` (or
        for one of them, after :data:`OUTAGE_DEADLINE`).
    """
    if recorder is None:
        recorder = history.Recorder(None, prefix)

    def outcome():
        op = recorder.ops[-1]
        return None if op.status == history.OK else op

    def release(owner):
        recorder.release(driver, owner)
        failed = outcome()
        if failed is not None:
            if not set(retried) & set(failed.errors):
                raise EngineError(str(failed))
            # NOTE: a release asks the lock service (another process may
            # hold the owner's reservation); while it is down the delete
            # goes on, as Murano's does, and a record left expires.
            counters["release_unavailable"] += 1
        routers.remove_interface(owner)

    alive = collections.deque()
    deadline = time.monotonic() + OUTAGE_DEADLINE
    sequence = 0
    while counters["deployed"] < count and not (stop and stop.is_set()):
        sequence += 1
        owner = "%s-%d" % (prefix, sequence)
        cidr = recorder.allocate(driver, owner, scope=router,
                                 taken=lambda: routers.cidrs(router))
        failed = outcome()
        if failed is not None:
            if (not set(retried) & set(failed.errors)
                    or time.monotonic() > deadline):
                raise EngineError(str(failed))
            counters["unavailable"] += 1
            # Pace the attempts while the lock service is down.
            time.sleep(0.05)
            continue
        if hold and plug_late:
            time.sleep(hold)
        try:
            routers.add_interface(router, owner, cidr)
        except router_mod.RouterInterfaceConflict:
            counters["collisions"] += 1
            release(owner)
            continue
        if hold and not plug_late:
            time.sleep(hold)
        recorder.confirm(driver, owner)
        failed = outcome()
        if failed is not None:
            if "ReservationLost" not in failed.errors:
                raise EngineError(str(failed))
            # The documented answer: undo the subnet, then try again.
            counters["lost"] += 1
            release(owner)
            continue
        counters["deployed"] += 1
        alive.append(owner)
        if len(alive) > keep:
            release(alive.popleft())


def engine(settings, lock_path, router_path, router, prefix, count, keep,
           results, history_dir=None, hold=0, stop=None,
           retried=("LockUnavailable",), plug_late=False):
    """Run :func:`deploy` in a process of its own with its own allocator.

    :param results: a queue receiving one dictionary of counters.
    :param history_dir: a directory to record the calls in, as
        ``<prefix>.jsonl``; in memory only if None.
    :param stop: an event that ends the deployments early once set.
    :param retried: as :func:`deploy`'s.
    :param plug_late: as :func:`deploy`'s.
    """
    driver = build_allocator(settings, lock_path)
    routers = router_mod.ModelRouter(router_path)
    recorder = history.Recorder(
        None if history_dir is None
        else os.path.join(history_dir, "%s.jsonl" % prefix), prefix)
    counters = collections.Counter()
    try:
        deploy(driver, routers, router, prefix, count, keep, counters,
               recorder, hold, stop, retried, plug_late)
    finally:
        results.put(dict(counters, prefix=prefix,
                         runtime=runtimes.current()))
        recorder.close()
        routers.close()
        driver.close()


def holder(settings, lock_path, router, prefix, count, results):
    """Reserve ``count`` CIDRs, report them, then wait to be killed.

    :param results: a queue receiving the list of reserved CIDRs.
    """
    driver = build_allocator(settings, lock_path)
    cidrs = [driver.allocate("%s-%d" % (prefix, i), scope=router)
             for i in range(count)]
    results.put(cidrs)
    threading.Event().wait()


def serve(settings, lock_path, router_path, history_path, prefix, namespace,
          requests, replies):
    """Make the calls a test asks for, one at a time, and time them.

    As an engine does, it reads the router at each allocation (``taken``)
    and plugs the subnet of each CIDR it is given (a refused plug ends the
    call in ``RouterInterfaceConflict``); a successful release unplugs it.

    The test waits for each reply no longer than its watchdog, so a call
    that does not end fails the test instead of hanging it (the process
    is killed at cleanup).

    :param router_path: the model router's database.
    :param history_path: the file to record the calls in.
    :param namespace: a network namespace to move into first (a client
        that will be partitioned), or None.
    :param requests: a queue of ``(kind, owner, scope, pause)``, kind
        being ``"allocate"``, ``"confirm"`` or ``"release"``, ``pause`` the
        seconds to wait before the call (Neutron creating the subnet
        between an allocate and its confirm); None ends.
    :param replies: a queue receiving :data:`READY` and the process's
        runtime (:func:`.runtimes.current`) once the allocator is built,
        then for each request a dictionary: ``status`` as the
        history records it, ``error`` the class name of the error and
        ``message`` the error, ``value``, ``seconds`` the call took.
    """
    if namespace is not None:
        netns.enter(namespace)
    netns_reaper.exit_with_test()
    driver = build_allocator(settings, lock_path)
    routers = router_mod.ModelRouter(router_path)
    recorder = history.Recorder(history_path, prefix)
    # NOTE: a spawned process imports everything first, which takes
    # seconds on a loaded machine; that is no part of any call's bound.
    replies.put((READY, runtimes.current()))
    try:
        for kind, owner, scope, pause in iter(requests.get, None):
            time.sleep(pause)
            started = time.monotonic()
            if kind == history.ALLOCATE:
                recorder.allocate(driver, owner, scope=scope,
                                  taken=routers.reader(scope))
            elif kind == history.CONFIRM:
                recorder.confirm(driver, owner)
            else:
                recorder.release(driver, owner)
            op = recorder.ops[-1]
            reply = {"status": op.status,
                     "error": op.errors[0] if op.errors else None,
                     "message": op.error, "value": op.value}
            try:
                if op.status == history.OK and kind == history.ALLOCATE:
                    routers.add_interface(scope, owner, op.value)
                elif op.status == history.OK and kind == history.RELEASE:
                    routers.remove_interface(owner)
            except router_mod.RouterInterfaceConflict as e:
                reply.update(status=history.FAIL, error=type(e).__name__,
                             message=str(e))
            reply["seconds"] = round(time.monotonic() - started, 1)
            replies.put(reply)
    finally:
        recorder.close()
        routers.close()
        driver.close()
