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

"""Redis with Sentinel: which server is master, and how to reach it.

tooz reaches the master through redis-py's Sentinel connection pool, which
asks the Sentinels for the master only when it opens a connection. A
master that was stopped (a VM pause, a swap storm) long enough for the
Sentinels to promote its replica, then resumed, still answers as master
on the connections opened before, until the Sentinels turn it into a
replica: measured, it granted locks that the new master granted to other
engines, and both engines' ``confirm`` succeeded (issue 33).

So the ``lock`` driver keeps its reservation records through clients of
its own
(:class:`~murano_cidr.engine.drivers.lock.service_records.RedisRecords`): each
call asks the Sentinels of the URL (its host and every ``sentinel_fallback``)
which server is master (:func:`discover`) and opens a connection of its own to
it, and a record is written there with ``ROLE`` and ``WAIT 1`` on the same
connection: the master answers ``WAIT`` once a replica acknowledged the write.
A master stopped and resumed has lost its replica (promoted), so ``WAIT``
answers 0 and the record is not used.
"""

import urllib.parse

from oslo_utils import netutils
from oslo_utils import strutils

#: Sentinel's own port, where the URL names none.
SENTINEL_PORT = 26379


def no_retries():
    """Return the redis-py client options that turn its retries off."""
    # NOTE: redis-py before 4.1 (Xena's 3.5.3) has no retry policy: it
    # tries a connection once, and a command again only after a timeout
    # with retry_on_timeout set, which is off by default.
    try:
        from redis import backoff
        from redis import retry
    except ImportError:
        return {}
    return {"retry": retry.Retry(backoff.NoBackoff(), 0)}


def master_name(url):
    """Return the master name of a Sentinel URL, or None.

    :param url: a ``redis://`` or ``rediss://`` coordination URL.
    """
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    names = query.get("sentinel")
    return names[-1] if names else None


def sentinels(url):
    """Return every Sentinel of the URL, in order, as ``(host, port)``.

    The URL's own host first, then each ``sentinel_fallback`` (tooz's
    grammar: ``redis://<sentinel>:<port>?sentinel=<master>&
    sentinel_fallback=<host>:<port>&...``).

    :param url: a ``redis://`` or ``rediss://`` coordination URL.
    :returns: a list; empty if the URL names no Sentinel master.
    :raises ValueError: for a malformed host or port.
    """
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qs(parts.query)
    if "sentinel" not in query or not parts.hostname:
        return []
    hosts = [(parts.hostname, parts.port or SENTINEL_PORT)]
    for fallback in query.get("sentinel_fallback", []):
        host, port = netutils.parse_host_port(fallback, SENTINEL_PORT)
        if not host:
            raise ValueError("malformed sentinel_fallback %r" % fallback)
        hosts.append((host, port))
    return hosts


def client_options(url, seconds):
    """Return redis-py's options for a server and for the Sentinels of ``url``.

    :param url: a ``redis://`` or ``rediss://`` coordination URL.
    :param seconds: how long each connection and answer may take.
    :returns: ``(server options, Sentinel options)``: TLS, credentials and
        timeouts, with redis-py's retries off.
    """
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qs(parts.query)
    options = {name: query[name][-1] for name in
               ("ssl_certfile", "ssl_keyfile", "ssl_ca_certs")
               if name in query}
    options.update(socket_timeout=seconds, socket_connect_timeout=seconds,
                   **no_retries())
    if strutils.bool_from_string(query.get("ssl", [""])[-1]):
        options["ssl"] = True
    sentinel_options = {
        "socket_timeout": seconds, "socket_connect_timeout": seconds}
    sentinel_options.update(no_retries())
    for name in ("username", "password"):
        if "sentinel_" + name in query:
            sentinel_options[name] = query["sentinel_" + name][-1]
    if strutils.bool_from_string(query.get("sentinel_ssl", [""])[-1]):
        sentinel_options["ssl"] = True
    if parts.username:
        options["username"] = urllib.parse.unquote(parts.username)
    if parts.password:
        options["password"] = urllib.parse.unquote(parts.password)
    return options, sentinel_options


def discover(url, seconds):
    """Ask the Sentinels of ``url`` which server is master, each once.

    :param url: a coordination URL naming a Sentinel master.
    :param seconds: how long each connection and answer may take.
    :returns: ``(host, port)``.
    :raises redis.RedisError: if no Sentinel names a master it judges up
        (redis-py's ``MasterNotFoundError``).
    """
    from redis import sentinel
    _options, sentinel_options = client_options(url, seconds)
    manager = sentinel.Sentinel(sentinels(url),
                                sentinel_kwargs=sentinel_options)
    try:
        return manager.discover_master(master_name(url))
    finally:
        for client in manager.sentinels:
            client.close()


def ping(url, seconds, describe):
    """Ask each Sentinel of the URL in turn until one names the master.

    :param url: a coordination URL naming a Sentinel master.
    :param seconds: how long each connection and answer may take.
    :param describe: turns an exception into one line of text.
    :returns: None if a Sentinel named the master and the master answered
        PING; else why not.
    """
    import redis
    try:
        host, port = discover(url, seconds)
    except redis.RedisError as e:
        return "no Sentinel of %s names the master %s: %s" % (
            ", ".join("%s:%d" % s for s in sentinels(url)), master_name(url),
            describe(e))
    return ping_server(url, host, port, seconds, describe, "the master ")


def ping_server(url, host, port, seconds, describe, what=""):
    """Ask one Redis server a PING, with the URL's options and no retry.

    :param url: the coordination URL, for its TLS and credentials.
    :param what: how the message names the server (``"the master "``).
    :returns: None if the server answered (an authentication error is an
        answer: the coordinator's start says what is wrong); else why not.
    """
    import redis
    options, _sentinel_options = client_options(url, seconds)
    client = redis.Redis(host=host, port=port, **options)
    try:
        client.ping()
    except (redis.AuthenticationError, redis.ResponseError):
        return None
    except redis.RedisError as e:
        return "no answer to PING from %s%s:%d: %s" % (
            what, host, port, describe(e))
    finally:
        client.close()
    return None
