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

"""Reservations as tooz locks: many hosts, through a coordination service.

The coordinator is started with its heartbeat, which keeps every lock this
process holds alive; a holder that dies stops beating and its locks expire
after their timeout. The coordinator is started at the first use rather
than when the driver is built, so an engine can start while the lock
service is down (its allocations fail until the service is back).
"""

import contextlib
import os
import socket
import threading
import urllib.parse
import uuid

from oslo_concurrency import lockutils
from oslo_log import log as logging
import stevedore.exception
import tooz
from tooz import coordination

from murano_cidr.drivers import lock as lock_package
from murano_cidr.drivers.lock import backend
from murano_cidr import exceptions
from murano_cidr import messages

LOG = logging.getLogger(__name__)

#: The tooz option that bounds a lock's life without heartbeat, by URL
#: scheme. ZooKeeper locks live as long as the session; the others take
#: ``lock_timeout``. File locks die with their process and need none.
_TTL_OPTION = {
    "zookeeper": "timeout",
    "kazoo": "timeout",
    "file": None,
    "ipc": None,
}


# NOTE: the one implementation is murano_cidr.messages'.
safe_url = messages.safe_url


def _tcp_probe(url, timeout):
    """Return None if the URL's host and port accept a connection.

    :returns: None (also for a URL without host and port), or why the
        connection failed.
    """
    try:
        parts = urllib.parse.urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError as e:
        return "bad URL: %s" % e
    if not host or not port:
        return None
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as e:
        return "cannot connect to %s:%d: %s" % (host, port,
                                                e.strerror or e)
    return None


def _member_id():
    return ("murano-cidr-%s-%d-%s" % (socket.gethostname(), os.getpid(),
                                      uuid.uuid4().hex[:8])).encode("utf-8")


def _bound_redis_retries(coordinator):
    # NOTE: tooz already retries a failed Redis command 15 times; redis-py
    # (>= 6) adds its own exponential backoff up to 10 s on each of those,
    # so with Redis down an allocation would hang for about a minute before
    # failing. Keep redis-py's retries short: failing closed quickly is the
    # point. Only the Redis client has set_retry().
    client = getattr(coordinator, "_client", None)
    if client is None or not hasattr(client, "set_retry"):
        return
    try:
        from redis import backoff
        from redis import retry
    except ImportError:
        return
    client.set_retry(retry.Retry(backoff.ExponentialBackoff(cap=0.05,
                                                            base=0.01), 1))


class ToozReservation(backend.Reservation):
    """A tooz lock, kept alive by the coordinator's heartbeat."""

    def __init__(self, lock, description):
        self._lock = lock
        self._description = description

    def still_held(self):
        try:
            return bool(self._lock.is_still_owner())
        except tooz.NotImplemented:
            # NOTE: some tooz drivers (etcd3) cannot tell; their lease is
            # kept alive by the heartbeat, which is all we can rely on.
            return True
        except tooz.ToozError as e:
            raise exceptions.LockUnavailable(url=self._description,
                                             reason=str(e))

    def release(self):
        try:
            self._lock.release()
        except tooz.ToozError as e:
            LOG.warning("Could not release lock %s on %s (it will expire): "
                        "%s", self._lock.name, self._description, e)


class ToozLockBackend(backend.LockBackend):
    """Locks from a tooz coordination backend.

    :param url: the tooz backend URL (``[cidr_allocator] coordination_url``).
    :param lock_timeout: seconds a lock survives without heartbeat; passed to
        the backend unless the URL sets its own.
    :param wait_timeout: seconds to wait for a scope lock.
    :raises murano_cidr.exceptions.InvalidConfig: if the URL names no
        installed tooz backend, or its client library is missing.
    """

    def __init__(self, url, lock_timeout, wait_timeout):
        self.url = url
        self.description = safe_url(url)
        self.wait_timeout = wait_timeout
        self._semaphores = lockutils.Semaphores()
        self._start_lock = threading.Lock()
        self._started = False
        parts = urllib.parse.urlsplit(url)
        options = {}
        ttl_option = _TTL_OPTION.get(parts.scheme, "lock_timeout")
        query = urllib.parse.parse_qs(parts.query)
        if ttl_option and ttl_option not in query:
            options[ttl_option] = lock_timeout
        try:
            self._coordinator = coordination.get_coordinator(
                url, _member_id(), **options)
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
                reason="%s: %s" % (self.description, e))

    def _unavailable(self, reason):
        return exceptions.LockUnavailable(url=self.description,
                                          reason=reason)

    def _coordinator_ready(self):
        with self._start_lock:
            if not self._started:
                try:
                    self._coordinator.start(start_heart=True)
                except tooz.ToozError as e:
                    raise self._unavailable(
                        "cannot start the coordinator: %s" % e)
                _bound_redis_retries(self._coordinator)
                self._started = True
                LOG.info("Connected to the lock service %s",
                         self.description)
            elif (self._coordinator.requires_beating
                    and not self._coordinator.heart.is_alive()):
                raise self._unavailable(
                    "the heartbeat that keeps locks alive has stopped")
        return self._coordinator

    @contextlib.contextmanager
    def scope_lock(self, name):
        coordinator = self._coordinator_ready()
        # NOTE: threads of this process queue here, so only one of them
        # at a time polls the lock service for the scope.
        with lockutils.internal_lock(name, semaphores=self._semaphores):
            lock = coordinator.get_lock(name.encode("utf-8"))
            try:
                acquired = lock.acquire(blocking=self.wait_timeout)
            except tooz.ToozError as e:
                raise self._unavailable(str(e))
            if not acquired:
                raise self._unavailable(
                    "waited %s seconds for the lock %s "
                    "([cidr_allocator] lock_wait_timeout)"
                    % (self.wait_timeout, name))
            try:
                yield
            finally:
                ToozReservation(lock, self.description).release()

    def try_reserve(self, name):
        coordinator = self._coordinator_ready()
        lock = coordinator.get_lock(name.encode("utf-8"))
        try:
            acquired = lock.acquire(blocking=False)
        except tooz.ToozError as e:
            raise self._unavailable(str(e))
        if not acquired:
            return None
        return ToozReservation(lock, self.description)

    def probe(self, timeout=5):
        """Tell whether the lock service answers, without keeping anything.

        The host and port are tried first: tooz clients retry a refused
        connection for a minute or more, and whoever asks (``murano-cidr-
        status``) wants the answer at once. URLs without a host and port
        (``file://``) go straight to the coordinator.

        :param timeout: seconds to wait for the connection.
        :returns: None, or why the service does not answer.
        """
        reason = _tcp_probe(self.url, timeout)
        if reason is not None:
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
        with self._start_lock:
            if not self._started:
                return
            self._started = False
            try:
                self._coordinator.stop()
            except tooz.ToozError as e:
                LOG.warning("Could not stop the coordinator of %s cleanly "
                            "(its locks will expire): %s",
                            self.description, e)
