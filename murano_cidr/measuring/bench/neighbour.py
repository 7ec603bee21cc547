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

"""Another engine, in a process of its own, that allocates when asked.

The benchmark's main row has engines take turns on one router: between
two timed allocations, :class:`Neighbour` allocates once in the same
scope, from another process with its own driver, connections and caches,
as a second Murano engine would.
"""

import contextlib
import multiprocessing
import uuid

from murano_cidr.engine import allocator
from murano_cidr import exceptions
from murano_cidr.measuring import workers
from murano_cidr.operator import confutils

#: Seconds to wait for the neighbour to start or to allocate; never
#: reached while its database answers.
TIMEOUT = 600.0


def _serve(groups, conn):
    """Allocate for every ``(scope, owner)`` received; runs in the child."""
    workers.serving()
    driver = None
    try:
        driver = workers.guarded(allocator.get_allocator,
                                 confutils.make_conf(groups))
        conn.send(None)
        while True:
            request = conn.recv()
            if request is None:
                return
            scope, owner = request
            try:
                conn.send(("ok", driver.allocate(owner, scope=scope)))
            except Exception as e:
                conn.send(("error", "%s: %s" % (type(e).__name__, e)))
    except Exception as e:
        conn.send(("error", "%s: %s" % (type(e).__name__, e)))
    finally:
        if driver is not None:
            with contextlib.suppress(Exception):
                driver.close()


class Neighbour(object):
    """A driver in another process, allocating in a scope on request.

    :param groups: the driver's configuration, ``{group: {option:
        value}}``.
    :raises murano_cidr.exceptions.BackendUnavailable: if the process does
        not start or its driver cannot be built.
    """

    def __init__(self, groups):
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(groups, child),
                                 daemon=True)
        with workers.starting():
            self._proc.start()
        child.close()
        started = self._reply()
        if started is not None:
            self.close()
            raise exceptions.BackendUnavailable(
                backend="the second engine",
                reason="it did not start: %s" % started[1])

    def _reply(self):
        if not self._conn.poll(TIMEOUT):
            raise exceptions.BackendUnavailable(
                backend="the second engine", reason="no answer in %d s"
                % TIMEOUT)
        try:
            return self._conn.recv()
        except EOFError:
            raise exceptions.BackendUnavailable(
                backend="the second engine", reason="its process exited")

    def allocate(self, scope):
        """Allocate a CIDR for a new owner in ``scope``; return the owner.

        :raises murano_cidr.exceptions.BackendUnavailable: if the
            allocation failed, with its error.
        """
        owner = "bench-neighbour-" + uuid.uuid4().hex
        self._conn.send((scope, owner))
        status, value = self._reply()
        if status != "ok":
            raise exceptions.BackendUnavailable(
                backend="the second engine",
                reason="its allocation failed: %s" % value)
        return owner

    def close(self):
        """Stop the process."""
        with contextlib.suppress(OSError, ValueError):
            self._conn.send(None)
        self._proc.join(30)
        if self._proc.is_alive():
            self._proc.terminate()
            self._proc.join(5)
        self._conn.close()
