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
(:mod:`~murano_cidr.drivers.lock.reservations`) that expire at
``[cidr_allocator] reservation_timeout`` on their own; this process keeps
a handle of each one it made, to confirm it. So that those handles, and
the record files and znodes a service does not expire itself, do not
outlive their timeout, the process also drops (deletes, if they are
still its own) every reservation of its own older than the timeout, on a
timer.

One :class:`threading.Timer` at a time, armed while anything is held, wakes
at the deadline of the oldest reservation (all share one timeout, so the
oldest is always the first due), releases every reservation due by then,
and is armed again for the next. The deadlines are measured on this
process's monotonic clock. In an engine monkey-patched by eventlet (as
Murano's is) the timer is a green thread: it runs once the deadline has
passed and the engine's other green threads yield, never before; its
release of a tooz lock is a cooperative network call.
"""

import threading
import time

from oslo_log import log as logging

LOG = logging.getLogger(__name__)


class Held(object):
    """A reservation this process holds, from allocate to confirm.

    :ivar allocation: the :class:`~murano_cidr.allocation.Allocation`.
    :ivar reservation: its :class:`~murano_cidr.drivers.lock.backend.
        Reservation`.
    :ivar deadline: when it is dropped, on the holdings' clock.
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
    :param timer: what makes a timer, called as :class:`threading.Timer`.
    """

    def __init__(self, timeout, clock=time.monotonic,
                 timer=threading.Timer):
        self.timeout = timeout
        self._clock = clock
        self._make_timer = timer
        # NOTE: guards the bookkeeping only; it is never held while the
        # lock service is asked.
        self._mutex = threading.Lock()
        self._held = {}
        self._timer = None

    def get(self, owner):
        """Return the :class:`Held` of ``owner``, or None."""
        with self._mutex:
            return self._held.get(owner)

    def values(self):
        """Return every :class:`Held`, as a new list."""
        with self._mutex:
            return list(self._held.values())

    def add(self, owner, allocation, reservation):
        """Hold ``reservation`` for ``owner`` until popped or due.

        :returns: None, or the :class:`Held` another thread added for
            ``owner`` first; ``reservation`` is then not kept.
        """
        with self._mutex:
            other = self._held.get(owner)
            if other is not None:
                return other
            self._held[owner] = Held(allocation, reservation,
                                     self._clock() + self.timeout)
            if self._timer is None:
                self._arm(self.timeout)
        return None

    def pop(self, owner):
        """Stop holding ``owner``; return its :class:`Held`, or None."""
        with self._mutex:
            return self._held.pop(owner, None)

    def pop_all(self):
        """Stop holding anything and stop the timer; return what was held."""
        with self._mutex:
            held, self._held = list(self._held.values()), {}
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        return held

    def _arm(self, delay):
        # Called with the mutex held.
        timer = self._make_timer(delay, self.expire)
        timer.daemon = True
        timer.start()
        self._timer = timer

    def expire(self):
        """Release every reservation whose deadline has passed.

        What the timer runs; it arms the next timer if anything is still
        held.

        :returns: the :class:`Held` dropped.
        """
        now = self._clock()
        with self._mutex:
            due = [(owner, held) for owner, held in self._held.items()
                   if held.deadline <= now]
            for owner, _held in due:
                del self._held[owner]
            self._timer = None
            if self._held:
                first = min(h.deadline for h in self._held.values())
                self._arm(max(0.0, first - now))
        for owner, held in due:
            allocation = held.allocation
            LOG.warning("Dropped the reservation of %s for %s in scope %s: "
                        "not confirmed within reservation_timeout (%s s); "
                        "any engine may now allocate it when the router "
                        "shows no subnet overlapping it", allocation.cidr,
                        owner, allocation.scope, self.timeout)
            held.reservation.release()
        return [held for _owner, held in due]
