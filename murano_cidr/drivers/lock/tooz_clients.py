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

import contextlib
import threading
import urllib.parse

#: Longest pause, in seconds, between two attempts to reach a lost server:
#: kazoo's default grows to an hour, which would delay recovery after an
#: outage by as much.
MAX_RETRY_DELAY = 1.0

#: Longest reason put into a message, in characters.
MAX_REASON = 400


def request_timeout(lock_timeout):
    """Return the seconds one request to Redis or etcd may wait.

    Half of ``lock_timeout`` (at least one second): a call of the ``lock``
    driver waits on at most two requests that fail (the one that times out,
    then a best-effort release), so it ends within about ``lock_timeout``.

    :param lock_timeout: ``[cidr_allocator] lock_timeout``.
    :returns: whole seconds (tooz's etcd3 driver takes an int).
    """
    return max(1, int(lock_timeout) // 2)


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
    #: Whether the service's host and port must answer within
    #: :func:`request_timeout` before the coordinator is started, because
    #: the client's first connection is not bounded by the options.
    probe_first = False

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

    def acquired(self, lock):
        """Do what a lock just taken needs before it is used.

        :param lock: the :class:`tooz.locking.Lock`, held.
        :raises tooz.ToozError: if the service cannot be reached.
        """

    def bounded_wait(self, lock, seconds):
        """Return a context manager around a blocking ``lock.acquire``.

        tooz's own timeout bounds the whole wait on every backend but
        ZooKeeper's (:meth:`ZooKeeper.bounded_wait`).

        :param lock: the :class:`tooz.locking.Lock` about to be acquired.
        :param seconds: how long the whole wait may last.
        """
        return contextlib.nullcontext()


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
    serialised by the scope lock. kazoo waits up to its timeout for the
    engine just ahead in the queue and starts that wait again each time
    the one ahead leaves, so the wait is cancelled at ``lock_wait_timeout``
    after it began (:meth:`bounded_wait`); the requests then in flight
    still end (one round trip each on a slow link, at most about
    ``lock_timeout`` on a dead one) before ``allocate`` fails.

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
        return (kazoo_exceptions.LockTimeout,
                kazoo_exceptions.CancelledError)

    @contextlib.contextmanager
    def bounded_wait(self, lock, seconds):
        # NOTE: tooz offers no public way to cancel a wait for a lock, and
        # kazoo's timeout restarts with each engine ahead that leaves (an
        # engine third in the queue could wait twice lock_wait_timeout).
        # kazoo's Lock.cancel() is public, but tooz keeps kazoo's lock in
        # the private attribute ZooKeeperLock._lock. This is the one place
        # that reads it; without it the wait is kazoo's alone.
        kazoo_lock = getattr(lock, "_lock", None)
        cancel = getattr(kazoo_lock, "cancel", None)
        if cancel is None:
            yield
            return
        timer = threading.Timer(seconds, cancel)
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()

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
      :func:`request_timeout` seconds (tooz's own default is 30 s whatever
      the lease), so a call fails within about ``lock_timeout`` when etcd
      does not answer, at once when it refuses connections.
    * tooz grants a lock's lease one round trip before the key is written
      and refreshes it only at the heartbeat after the lock was taken; the
      heart beats every ``(lock_timeout + d) / 2`` seconds, ``d`` being the
      beat's own duration, one round trip per lock held plus one. On a 2 s
      round trip a lease could so expire before its first refresh. The
      lease is therefore refreshed as soon as the lock is held
      (:meth:`acquired`). A reservation then lives as long as its engine
      while ``3 * n * RTT < lock_timeout``, ``n`` being the locks the
      engine holds at once (one per block of each reservation in flight);
      past that ``confirm`` may raise ``ReservationLost`` (never an
      overlap).
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
        # is; a request that outlives a lock's lease is of no use. The
        # membership lease keeps its own timeout: it sets the heartbeat's
        # pace (a shorter one would expire between beats on a slow link,
        # and each beat would then grant a new one).
        return {"lock_timeout": lock_timeout,
                "timeout": request_timeout(lock_timeout),
                "membership_timeout": lock_timeout}

    def acquired(self, lock):
        # Lock.heartbeat() of tooz's etcd3 driver refreshes this lock's
        # lease alone (one request), from now.
        lock.heartbeat()


class Redis(Client):
    """redis-py.

    Usage considerations:

    * Waiting for a lock polls it every 0.1 s, as on etcd3, with the same
      unfairness: picks are not serialised on Redis either.
    * Each connection attempt and each reply times out after
      :func:`request_timeout` seconds (tooz's ``socket_connect_timeout``
      and ``socket_timeout`` options; tooz's own default is 30 s), so a
      call fails within about ``lock_timeout`` when Redis does not answer.
      A refused connection is tried again by tooz (15 times, at once).
    * redis-py retries its first connection ten times, whatever the
      options, before :meth:`started` can turn that off; so the host and
      port are probed first, within the same timeout. Only a Redis that
      stops answering between that probe and the start makes the first
      call wait longer (eleven connection timeouts).
    """

    serialises = False
    probe_first = True

    def options(self, lock_timeout):
        seconds = request_timeout(lock_timeout)
        return {"lock_timeout": lock_timeout, "socket_timeout": seconds,
                "socket_connect_timeout": seconds}

    def started(self, coordinator):
        # NOTE: tooz already retries a refused Redis command 15 times, and
        # redis-py (>= 6) retries each command and each connection again,
        # with a backoff: one call would wait for many timeouts. tooz has
        # no public way to set redis-py's retry policy, so this, the one
        # use of tooz's private RedisDriver._client, turns it off
        # (redis-py's own public set_retry); tooz's retries remain. Until
        # the coordinator has started, redis-py's default applies.
        client = getattr(coordinator, "_client", None)
        if client is None or not hasattr(client, "set_retry"):
            return
        try:
            from redis import backoff
            from redis import retry
        except ImportError:
            return
        client.set_retry(retry.Retry(backoff.NoBackoff(), 0))


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
