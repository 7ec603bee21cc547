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

import socket
import urllib.parse

from oslo_utils import netutils

from murano_cidr.engine.drivers.lock import file_records
from murano_cidr.engine.drivers.lock import redis_ping
from murano_cidr.engine.drivers.lock import redis_sentinel
from murano_cidr.engine.drivers.lock import service_records
from murano_cidr import exceptions
from murano_cidr import messages

#: Longest pause, in seconds, between two attempts to reach a lost server:
#: kazoo's default grows to an hour, which would delay recovery after an
#: outage by as much.
MAX_RETRY_DELAY = 1.0

#: Longest reason put into a message, in characters.
MAX_REASON = 400

#: Replicas that must acknowledge a lock on Redis with Sentinel.
REPLICAS = 1


def request_timeout(lock_timeout):
    """Return the seconds one request to Redis or etcd may wait.

    Half of ``lock_timeout`` (at least one second): a call of the ``lock``
    driver waits on at most two requests that fail (the one that times out,
    then a best-effort release), so it ends within about ``lock_timeout``.

    :param lock_timeout: ``[cidr_allocator] lock_timeout``.
    :returns: whole seconds (tooz's etcd3 driver takes an int).
    """
    return max(1, int(lock_timeout) // 2)


def _hosts(url):
    parts = urllib.parse.urlsplit(url)
    if redis_sentinel.master_name(url):
        return redis_sentinel.sentinels(url)
    if parts.scheme in ETCD_SCHEMES:
        from murano_cidr.engine.drivers.lock import etcd_members
        return etcd_members.members(url)
    netloc = parts.netloc.rpartition("@")[2]
    if parts.scheme in ("zookeeper", "kazoo") and "," in netloc:
        # NOTE: kazoo's host list, "h1:p1,h2:p2": urlsplit cannot read
        # its port.
        return [netutils.parse_host_port(host, 2181)
                for host in netloc.split(",") if host]
    return [(parts.hostname, parts.port)]


def tcp_probe(url, timeout):
    """Return None if a host of the URL accepts a connection.

    Every host the URL names is tried in turn (a ZooKeeper host list, the
    members of an etcd URL, the Sentinels of a Redis URL): the client uses
    any of them.

    :returns: None (also for a URL without host and port), or why no
        connection succeeded.
    """
    try:
        hosts = [(host, port) for host, port in _hosts(url)
                 if host and port]
    except (ValueError, exceptions.InvalidConfig) as e:
        return "bad URL: %s" % messages.clause(e)
    reasons = []
    for host, port in hosts:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
        except OSError as e:
            reasons.append("cannot connect to %s:%d: %s"
                           % (host, port, e.strerror or e))
        else:
            return None
    return "; ".join(reasons) or None


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
    # NOTE: a reason comes from a server or a client library and may hold
    # anything (newlines, ESC); keep messages and log lines one line.
    reason = messages.printable("; caused by ".join(parts))
    if len(reason) > MAX_REASON:
        reason = reason[:MAX_REASON - 3] + "..."
    return reason


class Client(object):
    """A tooz backend whose client needs nothing special.

    :ivar heart: whether tooz's heartbeat thread must run to keep this
        process's locks alive.
    :ivar serialises: whether engines wait for the scope lock before they
        pick; True where the service queues its waiters in order.
    :ivar coordinated: whether the driver needs tooz's coordinator at
        all; False where engines take no scope lock and the records
        have a client of their own (the coordinator is then never built).
    """

    heart = True
    serialises = True
    coordinated = True

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

    def request_seconds(self, url, lock_timeout):
        """Return how long one request may wait, if the driver bounds it.

        :param url: the coordination URL.
        :param lock_timeout: ``[cidr_allocator] lock_timeout``.
        :returns: seconds; None where the client's options bound every
            call (the driver then waits for the client alone).
        """
        return None

    def ping(self, url, seconds):
        """Ask the service one question before the coordinator starts.

        :param url: the coordination URL.
        :param seconds: how long the answer may take.
        :returns: None (also where nothing needs asking), or why the
            service did not answer.
        """
        return None

    def records(self, url, lock_timeout, request):
        """Return where this service keeps the reservation records.

        :param url: the coordination URL.
        :param lock_timeout: ``[cidr_allocator] lock_timeout``.
        :param request: the lock backend's bounded call,
            ``request(what, function, seconds=None)``.
        :returns: a
            :class:`~murano_cidr.engine.drivers.lock.reservations.RecordStore`.
        :raises murano_cidr.exceptions.InvalidConfig: if the service
            cannot keep them.
        """
        raise exceptions.InvalidConfig(
            option="coordination_url",
            reason="the lock driver keeps its reservations as records in "
            "Redis, etcd3, ZooKeeper or a directory (file://); %s cannot "
            "keep them" % urllib.parse.urlsplit(url).scheme)


class Local(Client):
    """``file://`` and ``ipc://``: locks die with their process."""

    heart = False

    def options(self, lock_timeout):
        return {}

    def records(self, url, lock_timeout, request):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "file" or not parts.path:
            return super().records(url, lock_timeout, request)
        return file_records.FileRecords(parts.path, parts.path)


class ZooKeeper(Client):
    """kazoo.

    Usage considerations: a lock is an ephemeral sequential znode; it lives
    as long as the session, whose timeout is ``lock_timeout`` (the server
    must allow it: ``minSessionTimeout`` and ``maxSessionTimeout``, 2 and
    20 ticks by default). Waiters are queued in order, so picks are
    serialised by the scope lock. kazoo waits up to its timeout for the
    engine just ahead in the queue and starts that wait again each time
    the one ahead leaves, so the driver stops waiting for kazoo
    ``lock_wait_timeout`` after ``allocate`` began
    (:mod:`~murano_cidr.engine.drivers.lock.deadlines`) and ``allocate`` fails
    then. kazoo's wait goes on in the background, keeping the engine's
    place in the queue, until kazoo's own timeout; a lock it gets by then
    is released at once, so the engines queued behind lose a few round
    trips, no more.

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

    def records(self, url, lock_timeout, request):
        options = self.options(lock_timeout)
        return service_records.ZooKeeperRecords(url, options, request,
                                                lock_timeout)

    def errors(self):
        from kazoo import exceptions as kazoo_exceptions
        from kazoo.handlers import threading as kazoo_threading
        return (kazoo_exceptions.KazooException,
                kazoo_threading.KazooTimeoutError)

    def lock_timeouts(self):
        # NOTE: tooz offers no public way to cancel a wait for a lock, and
        # kazoo's timeout restarts with each engine ahead that leaves (an
        # engine third in the queue could wait twice lock_wait_timeout).
        # kazoo's Lock.cancel() is public, but tooz keeps kazoo's lock in
        # a private attribute; upstream tooz would need a public
        # ZooKeeperLock.cancel() (or a kazoo wait bounded as a whole). The
        # driver stops waiting at its deadline instead.
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

    * No tooz coordinator is built on etcd3: engines take no scope lock
      there, and the reservation records go through etcd3gw clients of
      the driver's own, one per member the URL names
      (:class:`~murano_cidr.engine.drivers.lock.service_records.EtcdRecords`,
      :mod:`~murano_cidr.engine.drivers.lock.etcd_members`). tooz's etcd3gw
      driver takes one host, so a URL naming several members could not
      start it, and one member's loss would stop it.
    * Each HTTP request times out after :func:`request_timeout` seconds;
      a call goes to the next member when one cannot be reached, two
      members at most, so it fails within about ``lock_timeout`` when no
      member answers, at once when they refuse connections. A member
      that failed is asked last by the calls that follow.
    * tooz waits for an etcd3 lock by trying it again every second, while
      the engine that just released it takes it back at once: with six
      engines allocating in one scope, some waited five seconds for their
      first CIDR (doc/source/benchmarks.rst). Picks are therefore not
      serialised on etcd3 (see :mod:`murano_cidr.engine.drivers.lock.backend`).
    """

    serialises = False
    coordinated = False

    def errors(self):
        from etcd3gw import exceptions as etcd3gw_exceptions
        return (etcd3gw_exceptions.Etcd3Exception,)

    def ping(self, url, seconds):
        """Ask each member in turn for its status, until one answers."""
        from etcd3gw import exceptions as etcd3gw_exceptions

        from murano_cidr.engine.drivers.lock import etcd_members
        try:
            etcd_members.Members(url, seconds).call(
                lambda client: client.status())
        except etcd3gw_exceptions.Etcd3Exception as e:
            return describe(e)
        return None

    def records(self, url, lock_timeout, request):
        return service_records.EtcdRecords(
            url, request_timeout(lock_timeout), request)


class Redis(Client):
    """redis-py.

    Usage considerations:

    * Waiting for a lock polls it every 0.1 s, as on etcd3, with the same
      unfairness: picks are not serialised on Redis either.
    * Each connection attempt and each reply times out after ``T =``
      :func:`request_timeout` seconds (tooz's ``socket_connect_timeout``
      and ``socket_timeout`` options; tooz's own default is 30 s).
    * redis-py (>= 6) retries each command ten times, with pauses, and
      each connection attempt of each of them ten times more; tooz tries
      a refused command 15 times. Against a stopped, cut-off or refusing
      Redis one call would so wait about a minute, or many. So the driver
      waits for a call no longer than one request's bound (``2 × T``: a
      late connection, then the reply; ``T`` for a best-effort release)
      and fails it then (:mod:`~murano_cidr.engine.drivers.lock.deadlines`);
      the call goes on in the background until redis-py gives up, and a lock
      it takes by then is released at once.
    * Before the coordinator starts, a client of the driver's own, with
      redis-py's retries off, sends one PING (:meth:`ping`): a Redis that
      is stopped, cut off or refusing fails the first call within ``2 ×
      T``, as any later one. Only a Redis that stops answering between
      that PING and the start makes the first call wait for redis-py's
      retries (about eleven timeouts). With Sentinel, each Sentinel of
      the URL is asked in turn for the master, which is then pinged.
    * Reservation records go through a redis-py client of the driver's
      own, with the same timeouts and no retries
      (:class:`~murano_cidr.engine.drivers.lock.service_records.RedisRecords`).
      With Sentinel, a record is used only if the server it was written
      on says it is master and a replica acknowledged it (``WAIT``, on
      the same connection: :mod:`.redis_sentinel`).
    """

    serialises = False

    def options(self, lock_timeout):
        seconds = request_timeout(lock_timeout)
        return {"lock_timeout": lock_timeout, "socket_timeout": seconds,
                "socket_connect_timeout": seconds}

    def request_seconds(self, url, lock_timeout):
        # NOTE: tooz has no public way to give redis-py a retry policy
        # (upstream tooz would need a "retry" option passed to
        # redis.Redis, or a public accessor of its client, whose public
        # set_retry() would do); so the driver bounds each call itself,
        # by the URL's own socket timeouts if it sets them.
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
        seconds = [float(query[name][-1]) for name in
                   ("socket_timeout", "socket_connect_timeout")
                   if name in query]
        return max(seconds) if seconds else request_timeout(lock_timeout)

    def ping(self, url, seconds):
        return redis_ping.ping(url, seconds, describe)

    def errors(self):
        # NOTE: the records' own client; tooz wraps its client's errors.
        import redis
        return (redis.RedisError,)

    def records(self, url, lock_timeout, request):
        return service_records.RedisRecords(
            url, self.request_seconds(url, lock_timeout), request, REPLICAS)


#: The schemes of tooz's etcd3gw driver.
ETCD_SCHEMES = ("etcd3", "etcd3+http", "etcd3+https")

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
