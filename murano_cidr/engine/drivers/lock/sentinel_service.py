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

"""Redis with Sentinel: records on the master the Sentinels name now.

Each record call asks the Sentinels of the URL (its host, then every
``sentinel_fallback``) which server is master (:func:`discover`), opens a
connection of its own to it and writes with ``ROLE`` and ``WAIT 1`` on it:
a record written on a stale master, or that no replica acknowledged, is
not used. Why tooz's own connection pool is not trusted for that:
:doc:`/reference/lock-driver`.
"""

import urllib.parse

from oslo_utils import netutils
from oslo_utils import strutils
import redis
from redis import sentinel

from murano_cidr.engine.drivers.lock import redis_service
from murano_cidr.engine.drivers.lock import tooz_backend
from murano_cidr import exceptions
from murano_cidr import messages

#: Sentinel's own port, where the URL names none.
SENTINEL_PORT = 26379

#: Replicas that must acknowledge a record.
REPLICAS = 1


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


def discover(url, seconds):
    """Ask the Sentinels of ``url`` which server is master, each once.

    :param url: a coordination URL naming a Sentinel master.
    :param seconds: how long each connection and answer may take.
    :returns: ``(host, port)``.
    :raises redis.RedisError: if no Sentinel names a master it judges up
        (redis-py's ``MasterNotFoundError``).
    """
    sentinel_options = {
        "socket_timeout": seconds, "socket_connect_timeout": seconds}
    sentinel_options.update(redis_service.no_retries())
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    for name in ("username", "password"):
        if "sentinel_" + name in query:
            sentinel_options[name] = query["sentinel_" + name][-1]
    if strutils.bool_from_string(query.get("sentinel_ssl", [""])[-1]):
        sentinel_options["ssl"] = True
    manager = sentinel.Sentinel(sentinels(url),
                                sentinel_kwargs=sentinel_options)
    try:
        return manager.discover_master(master_name(url))
    finally:
        for client in manager.sentinels:
            client.close()


class Sentinel(redis_service.Redis):
    """redis-py with Sentinel: every call goes to the master named now."""

    def hosts(self, url):
        return sentinels(url)

    def ping(self, url, seconds):
        """Ask each Sentinel in turn for the master, then PING it."""
        try:
            host, port = discover(url, seconds)
        except redis.RedisError as e:
            return "no Sentinel of %s names the master %s: %s" % (
                ", ".join("%s:%d" % s for s in sentinels(url)),
                master_name(url), tooz_backend.describe(e))
        return redis_service.ping_server(url, host, port, seconds,
                                         "the master ")

    def records(self, url, lock_timeout, request):
        return SentinelRecords(url, self.request_seconds(url, lock_timeout),
                               request)


class SentinelRecords(redis_service.RedisRecords):
    """Records on the master the Sentinels name, acknowledged by a replica.

    Each call opens a connection of its own to the master; a record is
    written with ``ROLE`` and ``WAIT`` on it, and one a stale master
    granted, or no replica acknowledged, is deleted and not used.
    """

    def _connected(self, function):
        host, port = discover(self._url, self._seconds)
        client = redis.Redis(host=host, port=port,
                             single_connection_client=True, **self._options)
        try:
            return function(client)
        finally:
            client.close()

    def create(self, name, data, version, hold):
        if version is not None:
            return False
        px = max(1, int(hold * 1000))

        def write(client):
            pipe = client.pipeline(transaction=False)
            pipe.execute_command("ROLE")
            pipe.set(name, data, nx=True, px=px)
            pipe.execute_command("WAIT", REPLICAS, int(self._seconds * 500))
            role, written, acknowledged = pipe.execute()
            role = role[0].decode() if isinstance(role[0], bytes) else role[0]
            if written and (role != "master" or int(acknowledged) < REPLICAS):
                client.eval(redis_service.COMPARE_AND_DELETE, 1, name, data)
                raise exceptions.LockUnavailable(
                    url=messages.safe_url(self._url),
                    reason="the record %s was written on a %s that %d "
                    "replica(s) acknowledged, %d needed" % (
                        name, role, int(acknowledged), REPLICAS))
            return bool(written)

        return self._call("cannot write the record %s" % name, write)
