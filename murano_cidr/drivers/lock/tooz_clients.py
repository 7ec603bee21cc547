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

"""What each tooz backend's client library needs to fail closed in time.

tooz passes most of its URL options to the client library underneath
(kazoo, etcd3gw, redis-py) but leaves their retry policies at their
defaults, some of which never give up. A :class:`Client` turns the
``lock`` driver's timeouts into the options that bound every call of one
backend, and names the client's exceptions that tooz lets through
unwrapped, so that each failure becomes a
:class:`~murano_cidr.exceptions.LockUnavailable` with its real reason.
"""

import urllib.parse

#: Longest pause, in seconds, between two attempts to reach a lost server:
#: kazoo's default grows to an hour, which would delay recovery after an
#: outage by as much.
MAX_RETRY_DELAY = 1.0

#: Longest reason put into a message, in characters.
MAX_REASON = 400


def _escape(text):
    # NOTE: a reason comes from a server or a client library and may hold
    # anything (newlines, ESC); keep messages and log lines one line.
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def describe(error):
    """Return an exception and its causes as one escaped line.

    tooz re-raises a client's error as a :class:`tooz.ToozError` whose own
    text may be empty (etcd3gw keeps its text in ``detail_text``); the
    causes say what actually happened.

    :param error: an exception.
    :returns: e.g. ``"ToozConnectionError; caused by ConnectionFailedError:
        ... Connection refused"``; never empty.
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
        # Only explicit causes: an exception raised while another was
        # handled is not caused by it.
        error = error.__cause__
    reason = _escape("; caused by ".join(parts))
    if len(reason) > MAX_REASON:
        reason = reason[:MAX_REASON - 3] + "..."
    return reason


class Client(object):
    """A tooz backend whose client needs nothing special.

    :ivar heart: whether tooz's heartbeat thread must run to keep this
        process's locks alive.
    :ivar serialises: whether engines wait for the scope lock before they
        pick; True where the service queues its waiters in order.
    """

    heart = True
    serialises = True

    def options(self, lock_timeout):
        """Return the tooz options that bound this backend's calls.

        :param lock_timeout: ``[cidr_allocator] lock_timeout``.
        :returns: a dictionary; the URL's own options take precedence.
        """
        return {"lock_timeout": lock_timeout}

    def errors(self):
        """Return the client exceptions tooz lets through unwrapped."""
        return ()

    def lock_timeouts(self):
        """Return the exceptions that mean a wait for a lock timed out."""
        return ()

    def closed(self, error):
        """Tell whether ``error`` means the client gave up for good.

        The coordinator must then be stopped and started again.
        """
        return False

    def started(self, coordinator):
        """Adjust the client once the coordinator has started."""


class Local(Client):
    """``file://`` and ``ipc://``: locks die with their process."""

    heart = False

    def options(self, lock_timeout):
        return {}


class ZooKeeper(Client):
    """kazoo.

    Usage considerations: a lock is an ephemeral sequential znode; it lives
    as long as the session, whose timeout is ``lock_timeout`` (the server
    must allow it: ``minSessionTimeout`` and ``maxSessionTimeout``, 2 and
    20 ticks by default). Waiters are queued in order, so picks are
    serialised by the scope lock. kazoo waits up to ``lock_wait_timeout``
    for the engine just ahead in the queue, and starts that wait again
    each time the one ahead leaves: with many engines queued a wait may
    last longer, but each engine ahead holds the lock only while it picks.

    kazoo queues a request made while it is disconnected until it is
    connected again, and by default tries to reconnect forever, so a call
    waits for as long as the server is away. Its connection retry policy
    is given a deadline of one session timeout: past it the session is
    expired anyway, kazoo closes the client and every waiting call fails.
    The coordinator is then started again, with a new session, at the next
    call. kazoo keeps the session alive with its own pings, so tooz's
    heartbeat is not needed (its thread would retry forever on a closed
    client, and stopping the coordinator would wait for it).
    """

    heart = False

    def options(self, lock_timeout):
        retry = {"max_tries": -1, "delay": 0.1, "backoff": 2,
                 "max_delay": MAX_RETRY_DELAY, "deadline": lock_timeout}
        return {"timeout": lock_timeout, "connection_retry": dict(retry),
                "command_retry": dict(retry)}

    def errors(self):
        from kazoo import exceptions as kazoo_exceptions
        from kazoo.handlers import threading as kazoo_threading
        return (kazoo_exceptions.KazooException,
                kazoo_threading.KazooTimeoutError)

    def lock_timeouts(self):
        from kazoo import exceptions as kazoo_exceptions
        return (kazoo_exceptions.LockTimeout,)

    def closed(self, error):
        from kazoo import exceptions as kazoo_exceptions
        while error is not None:
            if isinstance(error, kazoo_exceptions.ConnectionClosedError):
                return True
            error = error.__cause__
        return False


class Etcd3(Client):
    """etcd3gw: each call is one HTTP request, bounded by ``timeout``.

    Usage considerations:

    * A lock is a key attached to a lease of ``lock_timeout`` seconds,
      refreshed by tooz's heartbeat; each HTTP request times out after
      ``lock_timeout`` seconds (tooz's own default is 30 s whatever the
      lease), so a call fails within about that time when etcd does not
      answer, at once when it refuses connections.
    * tooz cannot ask whether an etcd3 lock is still held. ``confirm``
      learns it from the release, a compare-and-delete on the lock's
      value: it fails if the lease expired or another engine holds the
      key, and ``confirm`` then raises ``ReservationLost``, as it does
      when etcd cannot be reached.
    * tooz waits for an etcd3 lock by trying it again every second, while
      the engine that just released it takes it back at once: with six
      engines allocating in one scope, some waited five seconds for their
      first CIDR (doc/source/benchmarks.rst). Picks are therefore not
      serialised on etcd3 (see :mod:`murano_cidr.drivers.lock.backend`).
    * Each failed attempt at a lock grants a lease that lives
      ``lock_timeout`` seconds (tooz creates one per attempt).
    """

    serialises = False

    def errors(self):
        # NOTE: tooz translates etcd3gw's errors in lock calls, but not
        # when the coordinator starts (it grants a membership lease).
        from etcd3gw import exceptions as etcd3gw_exceptions
        return (etcd3gw_exceptions.Etcd3Exception,)

    def options(self, lock_timeout):
        # NOTE: tooz's default HTTP timeout is 30 s whatever lock_timeout
        # is; a request that outlives a lock's lease is of no use.
        return {"lock_timeout": lock_timeout, "timeout": lock_timeout}


class Redis(Client):
    """redis-py.

    Usage considerations:

    * Waiting for a lock polls it every 0.1 s, as on etcd3, with the same
      unfairness: picks are not serialised on Redis either.
    * When the coordinator first starts while Redis is down, tooz and
      redis-py retry for about a minute before ``LockUnavailable``; later
      failures are reported within about a second (:meth:`started`).
    """

    serialises = False

    def started(self, coordinator):
        # NOTE: tooz already retries a failed Redis command 15 times;
        # redis-py (>= 6) adds its own exponential backoff up to 10 s on
        # each of those, so with Redis down an allocation would hang for
        # about a minute before failing. Keep redis-py's retries short.
        client = getattr(coordinator, "_client", None)
        if client is None or not hasattr(client, "set_retry"):
            return
        try:
            from redis import backoff
            from redis import retry
        except ImportError:
            return
        client.set_retry(retry.Retry(
            backoff.ExponentialBackoff(cap=0.05, base=0.01), 1))


_CLIENTS = {
    "zookeeper": ZooKeeper,
    "kazoo": ZooKeeper,
    "etcd3": Etcd3,
    "etcd3+http": Etcd3,
    "etcd3+https": Etcd3,
    "redis": Redis,
    "rediss": Redis,
    "file": Local,
    "ipc": Local,
}


def for_url(url):
    """Return the :class:`Client` of a coordination URL's scheme.

    :param url: a tooz coordination URL.
    """
    scheme = urllib.parse.urlsplit(url).scheme
    return _CLIENTS.get(scheme, Client)()
