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

"""Redis through redis-py: records as keys with an expiry.

A record is a key with a ``PX`` expiry, written with ``SET NX`` and
deleted by a compare-and-delete script, through a client of the driver's
own with redis-py's retries off; each call is bounded by the lock backend.
"""

import urllib.parse

from oslo_utils import strutils
import redis

try:
    from redis import backoff as redis_backoff
    from redis import retry as redis_retry
except ImportError:
    # NOTE: redis-py before 4.1 (Xena's 3.5.3) has none: it does not
    # retry by default.
    redis_retry = None

from murano_cidr.engine.drivers.lock import backend
from murano_cidr.engine.drivers.lock import tooz_backend


def no_retries():
    """Return the redis-py client options that turn its retries off."""
    if redis_retry is None:
        return {}
    return {"retry": redis_retry.Retry(redis_backoff.NoBackoff(), 0)}


def client_options(url, seconds):
    """Return redis-py's options for a server of ``url``.

    :param seconds: how long each connection and answer may take.
    :returns: TLS, credentials and timeouts, with redis-py's retries off.
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
    if parts.username:
        options["username"] = urllib.parse.unquote(parts.username)
    if parts.password:
        options["password"] = urllib.parse.unquote(parts.password)
    return options


def ping_server(url, host, port, seconds, what=""):
    """Ask one Redis server a PING, with the URL's options and no retry.

    :param url: the coordination URL, for its TLS and credentials.
    :param what: how the message names the server (``"the master "``).
    :returns: None if the server answered (an authentication error is an
        answer: the coordinator's start says what is wrong); else why not.
    """
    options = client_options(url, seconds)
    client = redis.Redis(host=host, port=port, **options)
    try:
        client.ping()
    except (redis.AuthenticationError, redis.ResponseError):
        return None
    except redis.RedisError as e:
        return "no answer to PING from %s%s:%d: %s" % (
            what, host, port, tooz_backend.describe(e))
    finally:
        client.close()
    return None


class Redis(tooz_backend.Client):
    """redis-py: tooz's coordinator, records through a client of our own.

    How its calls are bounded, and why: :doc:`/reference/lock-driver`.
    """

    def options(self, lock_timeout):
        seconds = tooz_backend.request_timeout(lock_timeout)
        return {"lock_timeout": lock_timeout, "socket_timeout": seconds,
                "socket_connect_timeout": seconds}

    def request_seconds(self, url, lock_timeout):
        # NOTE: tooz has no public way to give redis-py a retry policy, so
        # the driver bounds each call itself, by the URL's own socket
        # timeouts if it sets them.
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
        seconds = [float(query[name][-1]) for name in
                   ("socket_timeout", "socket_connect_timeout")
                   if name in query]
        return (max(seconds) if seconds
                else tooz_backend.request_timeout(lock_timeout))

    def ping(self, url, seconds):
        parts = urllib.parse.urlsplit(url)
        if not parts.hostname:
            return None
        return ping_server(url, parts.hostname, parts.port or 6379, seconds)

    def errors(self):
        # NOTE: the records' own client; tooz wraps its client's errors.
        return (redis.RedisError,)

    def records(self, url, lock_timeout, request):
        return RedisRecords(url, self.request_seconds(url, lock_timeout),
                            request)


COMPARE_AND_DELETE = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('del', KEYS[1]) else return 0 end")


class RedisRecords(backend.RecordStore):
    """Records as Redis keys with a ``PX`` expiry.

    :param url: the coordination URL.
    :param seconds: how long each connection and answer may take.
    :param request: the lock backend's bounded call.
    """

    expires_itself = True

    def __init__(self, url, seconds, request):
        self._url = url
        self._seconds = seconds
        self._request = request
        parts = urllib.parse.urlsplit(url)
        self._address = (parts.hostname, parts.port or 6379)
        self._options = client_options(url, seconds)
        db = urllib.parse.parse_qs(parts.query).get("db")
        if db:
            self._options["db"] = int(db[-1])
        self._client = None

    def _connected(self, function):
        if self._client is None:
            host, port = self._address
            self._client = redis.Redis(host=host, port=port, **self._options)
        return function(self._client)

    def _call(self, what, function):
        return self._request(what, lambda: self._connected(function))

    def read(self, name):
        data = self._call("cannot read the record %s" % name,
                          lambda client: client.get(name))
        return data, data

    def create(self, name, data, version, hold):
        if version is not None:
            # NOTE: a record Redis still has is live; Redis drops it.
            return False
        px = max(1, int(hold * 1000))
        return bool(self._call(
            "cannot write the record %s" % name,
            lambda client: client.set(name, data, nx=True, px=px)))

    def delete(self, name, data):
        return bool(self._call(
            "cannot delete the record %s" % name,
            lambda client: client.eval(COMPARE_AND_DELETE, 1, name, data)))

    def close(self):
        if self._client is not None:
            self._client.close()
