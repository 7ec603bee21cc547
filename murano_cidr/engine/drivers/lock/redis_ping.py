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

"""One PING to Redis, tried once, before a coordinator starts.

redis-py retries a connection (since 4.1, by its retry policy) and tooz
gives it no policy, so a process's first call against a stopped Redis
would wait for every retry. A client of the driver's own, with retries
off, asks first
(:meth:`murano_cidr.engine.drivers.lock.tooz_clients.Redis.ping`).
"""

import urllib.parse

from murano_cidr.engine.drivers.lock import redis_sentinel


def ping(url, seconds, describe):
    """Ask the Redis of ``url`` one PING, with no retry.

    :param url: a ``redis://`` or ``rediss://`` coordination URL.
    :param seconds: how long the connection and the answer may each take.
    :param describe: turns an exception into one line of text.
    :returns: None if Redis answered (an authentication error is an
        answer: the coordinator's start says what is wrong) or the URL has
        no host; else why it did not. With Sentinel, every Sentinel of the
        URL is asked in turn for the master, which is then asked
        (:func:`~murano_cidr.engine.drivers.lock.redis_sentinel.ping`).
    """
    if redis_sentinel.master_name(url):
        return redis_sentinel.ping(url, seconds, describe)
    parts = urllib.parse.urlsplit(url)
    if not parts.hostname:
        return None
    return redis_sentinel.ping_server(url, parts.hostname, parts.port or 6379,
                                      seconds, describe)
