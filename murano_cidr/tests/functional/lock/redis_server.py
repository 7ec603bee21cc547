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

"""The machine's Redis, which the functional tests use, and a helper.

A Redis of a test's own is :class:`~.servers.RedisServer`.
"""

import os

import redis

#: The machine's Redis, which CI must run.
MACHINE_REDIS = ("127.0.0.1", 6379)


def answers(host, port):
    """Tell whether a Redis server answers PING at ``host:port``."""
    client = redis.Redis(host=host, port=port, socket_timeout=2,
                         socket_connect_timeout=2)
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
    finally:
        client.close()


def kill_and_reap(process):
    """SIGKILL a multiprocessing process and wait for it to be gone."""
    os.kill(process.pid, 9)
    process.join(timeout=30)
