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

"""A coordination service through tooz: many hosts.

tooz gives the scope lock (where the service queues its waiters); the
reservation records are kept through a client of the driver's own
(:mod:`.service_records`). Where no scope lock is taken and tooz's client
could not reach every member (etcd3), no coordinator is built. The
coordinator is started at the first use
rather than when the driver is built, so an engine can start while the
lock service is down (its allocations fail until the service is back).
Where the backend needs it, tooz's heartbeat keeps the locks this process
holds alive; a holder that dies stops beating and its locks expire after
their timeout (ZooKeeper: when its session expires). Every call to the
service is bounded by the
options :mod:`.tooz_clients` derives from ``lock_timeout``, and every
failure is a :class:`~murano_cidr.exceptions.LockUnavailable` naming the
service and the client's own reason.
"""

import contextlib
import os
import socket
import threading
import time
import urllib.parse
import uuid

from oslo_concurrency import lockutils
from oslo_log import log as logging
import stevedore.exception
import tooz
from tooz import coordination

from murano_cidr.engine.drivers import lock as lock_package
from murano_cidr.engine.drivers.lock import backend
from murano_cidr.engine.drivers.lock import deadlines
from murano_cidr.engine.drivers.lock import tooz_clients
from murano_cidr import exceptions
from murano_cidr import messages

LOG = logging.getLogger(__name__)


# NOTE: the one implementation is murano_cidr.messages'.
safe_url = messages.safe_url


def _release_if_taken(lock):
    def undo(taken):
        if taken:
            lock.release()
    return undo


def _member_id():
    return ("murano-cidr-%s-%d-%s" % (socket.gethostname(), os.getpid(),
                                      uuid.uuid4().hex[:8])).encode("utf-8")


class ToozLockBackend(backend.LockBackend):
    """Locks from a tooz coordination backend.

    :param url: the tooz backend URL (``[cidr_allocator] coordination_url``).
    :param lock_timeout: seconds a lock survives without heartbeat; the
        options that bound the backend's calls derive from it
        (:mod:`.tooz_clients`), unless the URL sets its own.
    :param wait_timeout: seconds to wait for a scope lock.
    :raises murano_cidr.exceptions.InvalidConfig: if the URL names no
        installed tooz backend, or its client library is missing.
    """

    def __init__(self, url, lock_timeout, wait_timeout):
        self.url = url
        self.description = safe_url(url)
        self.lock_timeout = lock_timeout
        self.wait_timeout = wait_timeout
        self._semaphores = lockutils.Semaphores()
        self._start_lock = threading.Lock()
        self._started = False
        self._restart = False
        self._service = tooz_clients.for_url(url)
        parts = urllib.parse.urlsplit(url)
        query = urllib.parse.parse_qs(parts.query)
        self._options = {name: value for name, value
                         in self._service.options(lock_timeout).items()
                         if name not in query}
        try:
            #: How long one request may wait, where the driver bounds it
            #: itself (None: the client's own options bound every call).
            self.request_seconds = self._service.request_seconds(
                url, lock_timeout)
            self._coordinator = self._new_coordinator()
            self._errors = (tooz.ToozError,) + self._service.errors()
            self.records = self._service.records(url, lock_timeout,
                                                 self.request)
        except stevedore.exception.NoMatches:
            raise exceptions.InvalidConfig(
                option="coordination_url",
                reason="%r names no installed tooz backend (tried %r)"
                % (self.description, parts.scheme))
        except ImportError as e:
            raise exceptions.InvalidConfig(
                option="coordination_url",
                reason="the client library of %s is not installed (%s); "
                "install the extra of your lock service: %s"
                % (parts.scheme, e, " or ".join(
                    "'pip install murano-cidr[%s]'" % extra
                    for extra in lock_package.EXTRAS)))
        except (ValueError, TypeError, tooz.ToozError) as e:
            raise exceptions.InvalidConfig(
                option="coordination_url",
                reason="%s: %s" % (self.description,
                                   tooz_clients.describe(e)))

    def _new_coordinator(self):
        if not self._service.coordinated:
            return None
        return coordination.get_coordinator(self.url, _member_id(),
                                            **self._options)

    @property
    def checked_seconds(self):
        """How long a request whose answer matters may wait, or None.

        Twice :attr:`request_seconds`: a late connection, then the reply.
        """
        return self.request_seconds and 2 * self.request_seconds

    @property
    def best_effort_seconds(self):
        """How long a best-effort release may wait, or None."""
        return self.request_seconds

    def deadline(self):
        """Return the deadline of one checked request, from now."""
        return deadlines.Deadline(self.checked_seconds)

    def request(self, what, function, seconds=None, undo=None):
        """Make one call through tooz, bounded, failing typed.

        :param what: what failed, e.g. ``"cannot take the lock X"``.
        :param function: the call, without arguments.
        :param seconds: how long to wait for it; None:
            :attr:`checked_seconds`. Where that is None too, as long as
            the client waits.
        :param undo: given the result of a call that ended too late.
        :raises murano_cidr.exceptions.LockUnavailable: if it failed, or
            did not end in time.
        """
        if seconds is None:
            seconds = self.checked_seconds
        with self.calling(what):
            if seconds is None:
                return function()
            try:
                return deadlines.call(seconds, function, undo)
            except deadlines.Late:
                raise self._unavailable(
                    "%s: no answer within %.1f seconds (the client goes on "
                    "trying in the background)" % (what, max(0, seconds)))

    def _unavailable(self, reason):
        return exceptions.LockUnavailable(url=self.description,
                                          reason=reason)

    @contextlib.contextmanager
    def calling(self, what):
        """Turn the failure of a call to the service into LockUnavailable.

        :param what: what failed, e.g. ``"cannot take the lock X"``.
        :raises murano_cidr.exceptions.LockUnavailable: with ``what`` and
            the client's reason.
        """
        try:
            yield
        except self._errors as e:
            if self._service.closed(e):
                self._restart = True
            raise self._unavailable("%s: %s" % (what,
                                                tooz_clients.describe(e)))

    def _coordinator_ready(self):
        if not self._service.coordinated:
            return None
        with self._start_lock:
            if self._restart:
                if self._started:
                    LOG.warning("The client of the lock service %s gave "
                                "up; starting it again", self.description)
                    self._started = False
                    try:
                        self._coordinator.stop()
                    except self._errors as e:
                        LOG.warning("Could not stop the coordinator of %s "
                                    "cleanly: %s", self.description,
                                    tooz_clients.describe(e))
                # NOTE: a new coordinator, with a client of its own: kazoo's
                # client, started again after it gave up, failed its first
                # request after the network healed.
                self._coordinator = self._new_coordinator()
                self._restart = False
            if not self._started:
                if self.request_seconds is not None:
                    reason = self._service.ping(self.url,
                                                self.request_seconds)
                    if reason is not None:
                        raise self._unavailable(
                            "cannot start the coordinator: %s" % reason)
                try:
                    with self.calling("cannot start the coordinator"):
                        self._coordinator.start(
                            start_heart=self._service.heart)
                except exceptions.LockUnavailable:
                    # NOTE: a start that failed is not tried again on the
                    # same client. kazoo's start() that times out while its
                    # connection loop gives up (both wait lock_timeout)
                    # stops the client after the loop emptied its queue:
                    # the request to close stays queued, and the client,
                    # started again, closes the session it opens and fails
                    # its first request. In an eventlet engine the loop
                    # always gives up first.
                    self._restart = True
                    raise
                self._started = True
                LOG.info("Connected to the lock service %s",
                         self.description)
            elif (self._service.heart and self._coordinator.requires_beating
                    and not self._coordinator.heart.is_alive()):
                raise self._unavailable(
                    "the heartbeat that keeps locks alive has stopped")
        return self._coordinator

    @contextlib.contextmanager
    def scope_lock(self, name):
        deadline = time.monotonic() + self.wait_timeout
        coordinator = self._coordinator_ready()
        if not self._service.serialises:
            yield
            return
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
                except self._service.lock_timeouts():
                    return False

            with self.calling("cannot take the lock %s" % name):
                # NOTE: kazoo starts its wait again each time the engine
                # ahead in the queue leaves; the driver waits no longer
                # than the deadline (tooz_clients.ZooKeeper).
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
                         self.best_effort_seconds)
        except exceptions.LockUnavailable as e:
            LOG.warning("Could not release lock %s on %s (it will expire): "
                        "%s", name, self.description, e.kwargs["reason"])

    def probe(self, timeout=5):
        """Tell whether the lock service answers, without keeping anything.

        The host and port are tried first: tooz clients retry a refused
        connection for a minute or more, and whoever asks (``murano-cidr-
        status``) wants the answer at once. URLs without a host and port
        (``file://``) go straight to the coordinator.

        :param timeout: seconds to wait for the connection.
        :returns: None, or why the service does not answer.
        """
        reason = tooz_clients.tcp_probe(self.url, timeout)
        if reason is None and (self.request_seconds is not None
                               or not self._service.coordinated):
            reason = self._service.ping(self.url, timeout)
        if reason is not None or not self._service.coordinated:
            return reason
        with self._start_lock:
            if self._started:
                return None
            try:
                self._coordinator.start(start_heart=False)
            except (tooz.ToozError, ValueError, RuntimeError) as e:
                return messages.clause(e)
            try:
                self._coordinator.stop()
            except tooz.ToozError as e:
                LOG.debug("Stopping the coordinator after a probe failed: "
                          "%s", e)
        return None

    def close(self):
        try:
            self._stop()
        finally:
            super().close()

    def _stop(self):
        with self._start_lock:
            if not self._started:
                return
            self._started = False
            heart = self._coordinator.heart
            if heart.is_alive():
                # NOTE: tooz's heart retries a failed beat forever, and
                # stop() waits for it: with the service down, stop() would
                # never return. Give the heart one lock timeout to stop.
                heart.stop()
                if heart.wait(self.lock_timeout):
                    LOG.warning("The heartbeat of %s did not stop within %s "
                                "seconds; leaving the coordinator (its locks "
                                "will expire)", self.description,
                                self.lock_timeout)
                    return
            try:
                self.request("cannot stop the coordinator",
                             self._coordinator.stop, self.lock_timeout)
            except exceptions.LockUnavailable as e:
                LOG.warning("Could not stop the coordinator of %s cleanly "
                            "(its locks will expire): %s",
                            self.description, e.kwargs["reason"])
