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

"""Measure the ``lock`` driver's calls under network faults, by hand.

The figures of doc/source/admin/timeouts.rst for Redis, etcd and
ZooKeeper that CI does not measure. As root, from a source tree::

    python tools/measure_lock_faults.py [--defaults] [--patched] \
        [--scenario blackhole|frozen|rtt|loss|wait ...] \
        [redis|etcd|zookeeper ...]

Each backend's server runs in a network namespace of its own (the fault
tests' fixtures); the engine is this process, with ``lock_timeout = 10``
and ``lock_wait_timeout = 20``, or the library's defaults with
``--defaults``. Prints one line per measurement: the scenario, the call,
its seconds and its outcome. ``wait`` (ZooKeeper only) holds the scope
lock from another session, queues three more sessions behind it that
leave one by one, and times the engine's ``allocate`` on a 2 s round trip.
``--patched`` runs it all in a new interpreter patched as Murano's
engine is (``eventlet.monkey_patch()`` before anything is imported).
"""

import argparse
import os
import sys
import threading
import time
import uuid

from kazoo import client as kazoo_client
from kazoo import exceptions as kazoo_exceptions
from tooz import coordination

from murano_cidr.engine.drivers.lock import picking
from murano_cidr import exceptions
from murano_cidr.tests.functional.lock import servers
from murano_cidr.tests.functional.lock import workers
from murano_cidr.tests.functional import netns
from murano_cidr.tests.functional import runtimes
from murano_cidr.tests.functional import slowlink

LOCK_TIMEOUT = 10
WAIT_TIMEOUT = 20
POOL = {"pool_cidrs": ["10.40.0.0/18"], "subnet_prefixlen": 24}
SERVERS = {"redis": servers.RedisServer, "etcd": servers.EtcdServer,
           "zookeeper": servers.ZooKeeperServer}
SCHEMES = {"redis": "redis", "etcd": "etcd3+http",
           "zookeeper": "zookeeper"}


#: Whether the drivers keep the library's default timeouts.
DEFAULTS = False


def driver(url):
    settings = dict(POOL, driver="lock", coordination_url=url)
    if not DEFAULTS:
        settings.update(lock_timeout=LOCK_TIMEOUT,
                        lock_wait_timeout=WAIT_TIMEOUT)
    return workers.build_allocator(settings)


def timed(scenario, what, call, *args, **kwargs):
    """Make a call, print its time and outcome; return its result."""
    started = time.monotonic()
    try:
        result, outcome = call(*args, **kwargs), "ok"
    except exceptions.MuranoCidrException as e:
        result, outcome = None, type(e).__name__
    seconds = time.monotonic() - started
    print("%-12s %-22s %6.1f s  %s" % (scenario, what, seconds, outcome),
          flush=True)
    return result


def blackholes(host, url, scope):
    fresh = driver(url)
    host.blackhole()
    timed("blackhole", "first allocate", fresh.allocate, "b-1", scope=scope)
    host.heal()
    timed("blackhole", "allocate after heal", fresh.allocate, "b-2",
          scope=scope)
    fresh.close()
    held = driver(url)
    held.allocate("m-1", scope=scope)
    host.blackhole()
    timed("mid-call", "confirm (held)", held.confirm, "m-1")
    timed("mid-call", "release", held.release, "m-1")
    timed("mid-call", "allocate", held.allocate, "m-2", scope=scope)
    host.heal()
    timed("mid-call", "allocate after heal", held.allocate, "m-3",
          scope=scope)
    held.close()


def frozen(host, url, scope):
    """The server stopped (SIGSTOP) before a first call, then while warm."""
    fresh = driver(url)
    host.freeze()
    timed("frozen", "first allocate", fresh.allocate, "f-1", scope=scope)
    host.thaw()
    timed("frozen", "allocate after SIGCONT", fresh.allocate, "f-2",
          scope=scope)
    fresh.close()
    warm = driver(url)
    warm.allocate("w-1", scope=scope)
    host.freeze()
    timed("frozen-warm", "confirm (held)", warm.confirm, "w-1")
    timed("frozen-warm", "allocate", warm.allocate, "w-2", scope=scope)
    host.thaw()
    timed("frozen-warm", "allocate after SIGCONT", warm.allocate, "w-3",
          scope=scope)
    warm.close()


def cycles(scenario, url, scope, count, hold):
    engine = driver(url)
    for i in range(count):
        owner = "%s-%d" % (scenario, i)
        if timed(scenario, "allocate", engine.allocate, owner,
                 scope=scope) is None:
            continue
        time.sleep(hold)
        timed(scenario, "confirm (held %.0f s)" % hold, engine.confirm,
              owner)
        # NOTE: a release makes requests too; on a lossy link it may fail.
        timed(scenario, "release", engine.release, owner)
    engine.close()


def _wait_in_queue(lock):
    try:
        lock.acquire(timeout=600)
    except kazoo_exceptions.CancelledError:
        pass


def waits(server, scope, ahead=3, step=15.0):
    """ZooKeeper: an allocate waiting for a scope lock held elsewhere.

    The holder and ``ahead`` sessions queued behind it talk to the server
    directly; the one queued last leaves first, every ``step`` seconds
    (kazoo starts its wait again each time). The engine is warm, then a
    fresh one makes its first call, both on a 2 s round trip.
    """
    proxy = slowlink.DelayProxy(server.address, server.port, 0)
    proxy.setUp()
    url = "zookeeper://127.0.0.1:%d" % proxy.port
    warm = driver(url)
    warm.allocate("q-0", scope=scope)
    warm.release("q-0")
    holder = coordination.get_coordinator(server.url, b"measure-holder")
    holder.start(start_heart=False)
    # Granted 10 s before the wait's deadline, nobody else queued: the
    # pick that follows still makes its round trips.
    late = (60 if DEFAULTS else WAIT_TIMEOUT) - 10
    other = scope + "-late"
    lock = holder.get_lock(picking.scope_lock_name(other).encode("utf-8"))
    lock.acquire(blocking=False)
    timer = threading.Timer(late, lock.release)
    proxy.delay = 2.0
    timer.start()
    timed("wait-2s", "allocate (freed at %d s)" % late, warm.allocate,
          "q-late", scope=other)
    timer.join()
    warm.release("q-late")
    lock = holder.get_lock(picking.scope_lock_name(scope).encode("utf-8"))
    lock.acquire(blocking=False)
    client = kazoo_client.KazooClient(hosts="%s:%d" % (server.address,
                                                       server.port))
    client.start(timeout=30)
    try:
        proxy.delay = 2.0
        fresh = driver(url)
        for engine, what in ((warm, "allocate (warm)"),
                             (fresh, "first allocate (fresh)")):
            queued = [client.Lock("/tooz/locks/"
                                  + picking.scope_lock_name(scope),
                                  "ahead-%d" % i) for i in range(ahead)]
            for waiter in queued:
                threading.Thread(target=_wait_in_queue, args=(waiter,),
                                 daemon=True).start()
                time.sleep(0.5)
            timers = [threading.Timer(step * (i + 1), waiter.cancel)
                      for i, waiter in enumerate(reversed(queued))]
            for timer in timers:
                timer.start()
            timed("wait-2s", what, engine.allocate, "q-%d" % id(engine),
                  scope=scope)
            for timer in timers:
                timer.cancel()
            for waiter in queued:
                waiter.cancel()
        lock.release()
        timed("wait-2s", "allocate (lock free)", warm.allocate, "q-1",
              scope=scope)
    finally:
        client.stop()
        client.close()
        holder.stop()
        warm.close()
        fresh.close()
        proxy.cleanUp()


def measure(name, scenarios):
    host = netns.ServerHost()
    host.setUp()
    try:
        server = SERVERS[name](host=host)
        server.setUp()
        scope = "router-%s" % uuid.uuid4().hex
        print("== %s (%s, %s)" % (name, "default options" if DEFAULTS else
                                  "lock_timeout %d, lock_wait_timeout %d"
                                  % (LOCK_TIMEOUT, WAIT_TIMEOUT),
                                  runtimes.current()), flush=True)
        if "blackhole" in scenarios:
            blackholes(host, server.url, scope)
        if "frozen" in scenarios:
            frozen(host, server.url, scope)
        if "rtt" in scenarios:
            proxy = slowlink.DelayProxy(server.address, server.port, 2.0)
            proxy.setUp()
            cycles("rtt-2s", "%s://127.0.0.1:%d" % (SCHEMES[name],
                                                    proxy.port),
                   scope, 3, 6)
            proxy.cleanUp()
        if "wait" in scenarios and name == "zookeeper":
            waits(server, scope)
        if "loss" in scenarios:
            host.loss(0.3)
            cycles("loss-30%", server.url, scope, 10, 0)
            host.heal()
        server.cleanUp()
    finally:
        host.cleanUp()


SCENARIOS = ("blackhole", "frozen", "rtt", "loss", "wait")


def main(argv):
    global DEFAULTS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--defaults", action="store_true",
                        help="the library's default timeouts")
    parser.add_argument("--patched", action="store_true",
                        help="patched by eventlet, as Murano's engine is")
    parser.add_argument("--scenario", action="append", choices=SCENARIOS,
                        help="what to measure (default: everything)")
    parser.add_argument("backend", nargs="*",
                        help="of %s (default: all)"
                        % ", ".join(sorted(SERVERS)))
    args = parser.parse_args(argv)
    unknown = set(args.backend) - set(SERVERS)
    if unknown:
        parser.error("unknown backend: %s" % ", ".join(sorted(unknown)))
    reason = netns.missing()
    if reason:
        print("needs %s" % reason)
        return 2
    if args.patched and runtimes.current() != runtimes.PATCHED:
        # A new interpreter: eventlet patches it before anything else is
        # imported, as murano/monkey_patch.py does.
        program = runtimes.BOOTSTRAP + (
            "import runpy, sys; sys.argv = %r; "
            "runpy.run_path(sys.argv[0], run_name='__main__')"
            % ([os.path.abspath(__file__)] + argv))
        os.execv(sys.executable, [sys.executable, "-c", program])
    DEFAULTS = args.defaults
    for name in args.backend or sorted(SERVERS):
        measure(name, args.scenario or SCENARIOS)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
