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

"""The reservations one ``lock`` driver made, each for a bounded time.

A reservation is kept by the lock service as records
(:mod:`~murano_cidr.engine.drivers.lock.reservations`) that expire at
``[cidr_allocator] reservation_timeout`` on their own, whatever this
process does; this process keeps a handle of each one it made, to
confirm it. A handle older than the timeout is dropped (its records
deleted, if they are still its own: files and znodes keep an expired
record) at the process's next allocation, so that the handles of
deployments that failed before their confirm do not pile up. Until then
a late :meth:`~murano_cidr.engine.drivers.lock.driver.LockDriver.confirm`
learns from the records whether the reservation is still its own
(``ReservationLost`` if not); after that, from the owners dropped, which
are remembered (the last :data:`DROPPED_KEPT`) for that answer alone.
The deadlines are measured on this process's monotonic clock; no timer
or thread is needed.
"""

import threading
import time

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

#: How many dropped owners a process remembers, so that their late
#: confirm says the reservation was lost.
DROPPED_KEPT = 10000


class Held(object):
    """A reservation this process made, from allocate to confirm.

    :ivar allocation: the :class:`~murano_cidr.engine.allocation.Allocation`.
    :ivar reservation: its :class:`~murano_cidr.engine.drivers.lock.backend.
        Reservation`.
    :ivar deadline: when its handle may be dropped, on the holdings' clock.
    """

    __slots__ = ("allocation", "reservation", "deadline")

    def __init__(self, allocation, reservation, deadline):
        self.allocation = allocation
        self.reservation = reservation
        self.deadline = deadline


class Holdings(object):
    """The reservations of one driver, by owner, dropped after ``timeout``.

    :param timeout: seconds a reservation is held at most
        (``reservation_timeout``).
    :param clock: a monotonic clock, in seconds.
    """

    def __init__(self, timeout, clock=time.monotonic):
        self.timeout = timeout
        self._clock = clock
        # NOTE: guards the bookkeeping only; it is never held while the
        # lock service is asked.
        self._mutex = threading.Lock()
        self._held = {}
        # owner -> the Allocation of a reservation dropped after the
        # timeout, oldest first.
        self._dropped = {}

    def get(self, owner):
        """Return the :class:`Held` of ``owner``, or None."""
        with self._mutex:
            return self._held.get(owner)

    def values(self):
        """Return every :class:`Held`, as a new list."""
        with self._mutex:
            return list(self._held.values())

    def add(self, owner, allocation, reservation):
        """Hold ``reservation`` for ``owner`` until popped or expired.

        :returns: None, or the :class:`Held` another thread added for
            ``owner`` first; ``reservation`` is then not kept.
        """
        with self._mutex:
            other = self._held.get(owner)
            if other is not None:
                return other
            self._held[owner] = Held(allocation, reservation,
                                     self._clock() + self.timeout)
            self._dropped.pop(owner, None)
        return None

    def pop(self, owner):
        """Stop holding ``owner``; return its :class:`Held`, or None."""
        with self._mutex:
            return self._held.pop(owner, None)

    def pop_dropped(self, owner):
        """Forget that ``owner`` was dropped after the timeout.

        :returns: the :class:`~murano_cidr.engine.allocation.Allocation`
            dropped, or None if ``owner`` was not.
        """
        with self._mutex:
            return self._dropped.pop(owner, None)

    def pop_all(self):
        """Stop holding anything; return what was held."""
        with self._mutex:
            held, self._held = list(self._held.values()), {}
        return held

    def expire(self):
        """Drop every reservation whose deadline has passed.

        Its records are deleted if they are still its own (best effort).

        :returns: the :class:`Held` dropped.
        """
        now = self._clock()
        with self._mutex:
            due = [(owner, held) for owner, held in self._held.items()
                   if held.deadline <= now]
            for owner, held in due:
                del self._held[owner]
                self._dropped[owner] = held.allocation
            for owner in list(self._dropped)[:-DROPPED_KEPT or None]:
                del self._dropped[owner]
        for owner, held in due:
            allocation = held.allocation
            LOG.warning("Dropped the reservation of %s for %s in scope %s: "
                        "not confirmed within reservation_timeout (%s s); "
                        "any engine may now allocate it when the router "
                        "shows no subnet overlapping it", allocation.cidr,
                        owner, allocation.scope, self.timeout)
            held.reservation.release()
        return [held for _owner, held in due]
