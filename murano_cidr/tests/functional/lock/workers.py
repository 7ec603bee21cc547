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
import threading
import time

from oslo_config import cfg

from murano_cidr import allocator
from murano_cidr import exceptions
from murano_cidr import opts
from murano_cidr.tests.functional.lock import model_router

#: How long a worker keeps trying while the lock service is down.
OUTAGE_DEADLINE = 120


def build_allocator(settings, lock_path=None):
    """Build the ``lock`` driver the way a service does, from a ConfigOpts.

    :param settings: ``[cidr_allocator]`` options, as a dictionary.
    :param lock_path: ``[oslo_concurrency] lock_path``, if any.
    """
    conf = cfg.ConfigOpts()
    opts.register_opts(conf)
    conf([], project="murano-cidr", default_config_files=[])
    for name, value in settings.items():
        conf.set_override(name, value, group=opts.GROUP)
    if lock_path is not None:
        conf.set_override("lock_path", lock_path, group="oslo_concurrency")
    return allocator.get_allocator(conf)


def deploy(driver, routers, router, prefix, count, keep, counters):
    """Deploy ``count`` networks on ``router``, keeping ``keep`` alive.

    Each deployment allocates a CIDR, plugs the subnet into the model
    router while it holds the reservation, then confirms; the oldest
    network is deleted (and released) once more than ``keep`` are alive.
    A refused plug is a collision. While the lock service is down,
    allocations fail and are tried again.

    :param counters: a :class:`collections.Counter` updated in place.
    """
    alive = collections.deque()
    deadline = time.monotonic() + OUTAGE_DEADLINE
    sequence = 0
    while counters["deployed"] < count:
        sequence += 1
        owner = "%s-%d" % (prefix, sequence)
        try:
            cidr = driver.allocate(owner, scope=router,
                                   taken=lambda: routers.cidrs(router))
        except exceptions.LockUnavailable:
            counters["unavailable"] += 1
            if time.monotonic() > deadline:
                raise
            # Pace the attempts while the lock service is down.
            time.sleep(0.05)
            continue
        try:
            routers.add(router, cidr, owner)
        except model_router.Overlap:
            counters["collisions"] += 1
            driver.release(owner)
            continue
        try:
            driver.confirm(owner)
        except exceptions.ReservationLost:
            # The documented answer: undo the subnet, then try again.
            counters["lost"] += 1
            routers.remove(owner)
            driver.release(owner)
            continue
        counters["deployed"] += 1
        alive.append(owner)
        if len(alive) > keep:
            old = alive.popleft()
            routers.remove(old)
            driver.release(old)


def engine(settings, lock_path, router_path, router, prefix, count, keep,
           results):
    """Run :func:`deploy` in a process of its own with its own allocator.

    :param results: a queue receiving one dictionary of counters.
    """
    driver = build_allocator(settings, lock_path)
    routers = model_router.ModelRouter(router_path)
    counters = collections.Counter()
    try:
        deploy(driver, routers, router, prefix, count, keep, counters)
    finally:
        results.put(dict(counters, prefix=prefix))
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
