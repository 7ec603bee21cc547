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

"""Redis servers for the functional tests: the machine's, or one of ours."""

import os
import shutil
import socket
import subprocess

import fixtures
import redis
import tenacity

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


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _until(condition, timeout):
    """Poll ``condition`` until it returns True or ``timeout`` passes."""
    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_delay(timeout),
        wait=tenacity.wait_fixed(0.05),
        retry=tenacity.retry_if_result(lambda ok: not ok),
        reraise=True)
    try:
        return retrying(condition)
    except tenacity.RetryError:
        return False


class RedisServer(fixtures.Fixture):
    """A ``redis-server`` of the test's own, on a free loopback port.

    It keeps its data in an append-only file under a temporary directory,
    fsynced at every write, so a stop and start lose no lock (as a
    production Redis used for locks should be run).

    :ivar url: the coordination URL of the server.
    """

    def __init__(self, binary="redis-server"):
        super().__init__()
        self.binary = shutil.which(binary)
        self.process = None

    @property
    def available(self):
        return self.binary is not None

    def _setUp(self):
        self.port = _free_port()
        self.url = "redis://127.0.0.1:%d" % self.port
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.addCleanup(self.stop)
        self.start()

    def start(self):
        """Start the server and wait until it answers."""
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1",
             "--dir", self.directory, "--save", "", "--appendonly", "yes",
             "--appendfsync", "always", "--protected-mode", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            cwd=self.directory)
        if not _until(lambda: answers("127.0.0.1", self.port), 20):
            self.stop()
            raise RuntimeError("redis-server on port %d did not start"
                               % self.port)

    def stop(self):
        """Stop the server (SIGTERM, as an operator would) and wait."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self.process = None


def kill_and_reap(process):
    """SIGKILL a multiprocessing process and wait for it to be gone."""
    os.kill(process.pid, 9)
    process.join(timeout=30)
