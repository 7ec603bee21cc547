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

"""The scope lock of the services that queue its waiters: ZooKeeper, file://.

Engines there pick one at a time in a scope: the lock is taken through
tooz, threads of this process queue on a semaphore first, and the whole
wait is bounded by ``lock_wait_timeout`` (kazoo's own wait restarts each
time the engine ahead leaves, so the driver stops waiting at the deadline
and gives back a lock granted later).
"""

import contextlib
import time

from oslo_concurrency import lockutils
from oslo_log import log as logging

from murano_cidr.engine.drivers.lock import deadlines
from murano_cidr.engine.drivers.lock import tooz_backend
from murano_cidr import exceptions

LOG = logging.getLogger(__name__)


def _release_if_taken(lock):
    def undo(taken):
        if taken:
            lock.release()
    return undo


class QueuedLockBackend(tooz_backend.ToozLockBackend):
    """A tooz backend whose scope lock is taken: engines pick in turn."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._semaphores = lockutils.Semaphores()

    @contextlib.contextmanager
    def scope_lock(self, name):
        deadline = time.monotonic() + self.wait_timeout
        coordinator = self._coordinator_ready()
        # NOTE: threads of this process queue here, so only one of them
        # at a time polls the lock service for the scope; the wait for the
        # service counts against the same deadline.
        semaphore = self._semaphores.get(name)
        if not semaphore.acquire(timeout=self.wait_timeout):
            raise self._timed_out(name)
        try:
            lock = coordinator.get_lock(name.encode("utf-8"))
            remaining = max(0.0, deadline - time.monotonic())

            def wait():
                try:
                    return lock.acquire(blocking=remaining)
                except self.client.lock_timeouts():
                    return False

            with self.calling("cannot take the lock %s" % name):
                # NOTE: kazoo starts its wait again each time the engine
                # ahead in the queue leaves; the driver waits no longer
                # than the deadline.
                try:
                    acquired = deadlines.call(remaining, wait,
                                              undo=_release_if_taken(lock))
                except deadlines.Late:
                    acquired = False
            if not acquired:
                raise self._timed_out(name)
            try:
                yield
            finally:
                self._release(lock, name)
        finally:
            semaphore.release()

    def _timed_out(self, name):
        return self._unavailable(
            "the lock %s was not granted within %s seconds "
            "([cidr_allocator] lock_wait_timeout)" % (name,
                                                      self.wait_timeout))

    def _release(self, lock, name):
        """Release a scope lock; never raises (a lost lock is free)."""
        try:
            self.request("cannot release the lock %s" % name, lock.release,
                         self.request_seconds)
        except exceptions.LockUnavailable as e:
            LOG.warning("Could not release lock %s on %s (it will expire): "
                        "%s", name, self.description, e.kwargs["reason"])


class QueuedClient(tooz_backend.Client):
    """A service that queues the waiters of a lock in order."""

    serialises = True
    backend_class = QueuedLockBackend
