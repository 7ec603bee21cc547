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

:class:`ToozLockBackend` bounds and types every call to the service and
starts tooz's coordinator at the first use; each service's :class:`Client`
says what its client library needs and keeps the records. How each
service fails and is bounded: :doc:`/reference/lock-driver`.
"""

import contextlib
import os
import socket
import threading
import urllib.parse
import uuid

from oslo_log import log as logging
import tooz
from tooz import coordination

from murano_cidr.engine.drivers.lock import backend
from murano_cidr.engine.drivers.lock import deadlines
from murano_cidr import exceptions
from murano_cidr import messages
from murano_cidr import opts

LOG = logging.getLogger(__name__)

#: Longest pause, in seconds, between two attempts to reach a lost server
#: (kazoo's default grows to an hour).
MAX_RETRY_DELAY = 1.0

#: Longest reason put into a message, in characters.
MAX_REASON = 400


def request_timeout(lock_timeout):
    """Return the whole seconds one request to Redis or etcd may wait.

    Half of ``lock_timeout``, at least one: a call waits on two failing
    requests at most, so it ends within about ``lock_timeout``.
    """
    return max(1, int(lock_timeout) // 2)


def for_url(url):
    """Return the :class:`Client` of ``url``; see :func:`.backend.service`."""
    return backend.service(url)()


def describe(error):
    """Return an exception and its explicit causes as one escaped line.

    tooz re-raises a client's error as a :class:`tooz.ToozError` whose own
    text may be empty; the causes say what happened.

    :returns: e.g. ``"ToozConnectionError; caused by ConnectionFailedError:
        ... Connection refused"``.
    """
    parts = []
    for _ in range(8):
        if error is None:
            break
        name = type(error).__name__
        text = str(error) or str(getattr(error, "detail_text", None) or "")
        if not text:
            parts.append(name)
        elif not any(text in part for part in parts):
            # NOTE: a wrapper often repeats its cause's text; say it once.
            parts.append("%s: %s" % (name, text))
        error = error.__cause__
    # NOTE: a reason comes from a server or a client library and may hold
    # anything (newlines, ESC); keep messages and log lines one line.
    reason = messages.printable("; caused by ".join(parts))
    if len(reason) > MAX_REASON:
        reason = reason[:MAX_REASON - 3] + "..."
    return reason


class Client(object):
    """A tooz backend whose client needs nothing special.

    :ivar heart: whether tooz's heartbeat must run to keep locks alive.
    :ivar serialises: whether engines take the scope lock before they
        pick (where the service queues its waiters in order).
    :ivar coordinated: whether a tooz coordinator is built at all.
    """

    heart = True
    serialises = False
    coordinated = True

    def options(self, lock_timeout):
        """Return the tooz options that bound calls; the URL's own win."""
        return {"lock_timeout": lock_timeout}

    def errors(self):
        """Return the client exceptions tooz lets through unwrapped."""
        return ()

    def lock_timeouts(self):
        """Return the exceptions that mean a wait for a lock timed out."""
        return ()

    def closed(self, error):
        """Tell whether ``error`` means the client gave up for good."""
        return False

    def request_seconds(self, url, lock_timeout):
        """Return how long one request may wait; None: the client bounds."""
        return None

    def ping(self, url, seconds):
        """Ask the service once; return None or why it did not answer."""
        return None

    @classmethod
    def open(cls, url, conf):
        """Return the lock backend of ``url``, with this client."""
        group = conf[opts.GROUP]
        return cls.backend_class(url, group.lock_timeout,
                                 group.lock_wait_timeout, cls())

    def hosts(self, url):
        """Return the ``(host, port)`` the URL names, in the order tried."""
        parts = urllib.parse.urlsplit(url)
        return [(parts.hostname, parts.port)]

    def records(self, url, lock_timeout, request):
        """Return the :class:`~.backend.RecordStore` of this service.

        :param request: the lock backend's bounded call,
            ``request(what, function, seconds=None)``.
        :raises murano_cidr.exceptions.InvalidConfig: if the service
            cannot keep records.
        """
        raise exceptions.InvalidConfig(
            option="coordination_url",
            reason="the lock driver keeps its reservations as records in "
            "Redis, etcd3, ZooKeeper or a directory (file://); %s cannot "
            "keep them" % urllib.parse.urlsplit(url).scheme)


def _member_id():
    return ("murano-cidr-%s-%d-%s" % (socket.gethostname(), os.getpid(),
                                      uuid.uuid4().hex[:8])).encode("utf-8")


class ToozLockBackend(backend.LockBackend):
    """Locks and records in a coordination service, through tooz.

    :param url: the tooz backend URL (``[cidr_allocator] coordination_url``).
    :param lock_timeout: seconds a lock survives without heartbeat; the
        options that bound the service's calls derive from it.
    :param wait_timeout: seconds to wait for a scope lock.
    :param client: the service's :class:`Client`; None: the one the
        URL's scheme names.
    :raises murano_cidr.exceptions.InvalidConfig: if the URL names no
        service of ours, or its client library is missing.
    """

    def __init__(self, url, lock_timeout, wait_timeout, client=None):
        self.url = url
        self.description = messages.safe_url(url)
        self.lock_timeout = lock_timeout
        self.wait_timeout = wait_timeout
        self._start_lock = threading.Lock()
        self._started = False
        self._restart = False
        #: The service's :class:`Client`.
        self.client = client if client is not None else for_url(url)
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
        self._options = {name: value for name, value
                         in self.client.options(lock_timeout).items()
                         if name not in query}
        try:
            #: How long one request may wait, where the driver bounds it
            #: itself (None: the client's own options bound every call).
            self.request_seconds = self.client.request_seconds(
                url, lock_timeout)
            self._coordinator = self._new_coordinator()
            self._errors = (tooz.ToozError,) + self.client.errors()
            self.records = self.client.records(url, lock_timeout,
                                               self.request)
        except ImportError as e:
            raise backend.missing_client(url, e)
        except (ValueError, TypeError, tooz.ToozError) as e:
            raise exceptions.InvalidConfig(
                option="coordination_url",
                reason="%s: %s" % (self.description, describe(e)))

    def _new_coordinator(self):
        if not self.client.coordinated:
            return None
        return coordination.get_coordinator(self.url, _member_id(),
                                            **self._options)

    @property
    def checked_seconds(self):
        """Twice :attr:`request_seconds` (a late connection, the reply)."""
        return self.request_seconds and 2 * self.request_seconds

    def request(self, what, function, seconds=None, undo=None):
        """Return ``function()``, bounded and failing typed.

        :param what: what failed, e.g. ``"cannot take the lock X"``.
        :param seconds: how long to wait; None: :attr:`checked_seconds`
            (None too: as long as the client waits).
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
        return exceptions.LockUnavailable(url=self.description, reason=reason)

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
            if self.client.closed(e):
                self._restart = True
            raise self._unavailable("%s: %s" % (what, describe(e)))

    def _coordinator_ready(self):
        if not self.client.coordinated:
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
                                    describe(e))
                # NOTE: a new coordinator, with a new client: kazoo's,
                # started again after it gave up, failed its first request.
                self._coordinator = self._new_coordinator()
                self._restart = False
            if not self._started:
                if self.request_seconds is not None:
                    reason = self.client.ping(self.url, self.request_seconds)
                    if reason is not None:
                        raise self._unavailable(
                            "cannot start the coordinator: %s" % reason)
                try:
                    with self.calling("cannot start the coordinator"):
                        self._coordinator.start(
                            start_heart=self.client.heart)
                except exceptions.LockUnavailable:
                    # NOTE: a start that failed is not tried again on the
                    # same client (kazoo's, timed out, closes the next
                    # session it opens: doc/source/reference/lock-driver).
                    self._restart = True
                    raise
                self._started = True
                LOG.info("Connected to the lock service %s",
                         self.description)
            elif (self.client.heart and self._coordinator.requires_beating
                    and not self._coordinator.heart.is_alive()):
                raise self._unavailable(
                    "the heartbeat that keeps locks alive has stopped")
        return self._coordinator

    @contextlib.contextmanager
    def scope_lock(self, name):
        """Hold nothing: engines on this service do not wait for each other.

        The coordinator is started first, where the service has one.
        """
        self._coordinator_ready()
        yield

    def try_start(self):
        """Start and stop the coordinator, unless it runs; keep nothing.

        :returns: None, or why it could not start.
        """
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
                # stop() waits for it: give it one lock timeout.
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


#: The backend a :class:`Client` is opened with, unless its own says.
Client.backend_class = ToozLockBackend
