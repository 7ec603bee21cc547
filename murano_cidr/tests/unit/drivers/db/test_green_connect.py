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

"""A PostgreSQL connection attempt ends inside an eventlet engine too.

Under eventlet's ``monkey_patch()`` psycopg2 runs with eventlet's wait
callback, and libpq, connecting asynchronously, ignores
``connect_timeout``: a first call to a server whose kernel accepts the
connection but which never answers waited for ever (issue 34). Each test
runs an engine patched as Murano's is (``eventlet.monkey_patch()`` first)
in a new interpreter, against a listening socket nobody reads (no server
is needed), and asserts the call ends in ``DatabaseUnavailable`` before a
watchdog several times its bound, while the wait callback stays
eventlet's and the process's other connections keep theirs.
"""

import json
import subprocess
import sys

from murano_cidr.tests import base

#: The engine's bound: call_timeout (1 s) + connect_timeout (1 s), one
#: attempt; the watchdog is far above it.
WATCHDOG = 60

ENGINE = r"""
import eventlet
eventlet.monkey_patch()

import json
import socket
import time

import psycopg2
from psycopg2 import extensions

from murano_cidr.engine import allocator
from murano_cidr.operator import confutils

listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(8)
url = "postgresql+psycopg2://nobody@127.0.0.1:%d/murano" % (
    listener.getsockname()[1])
conf = confutils.make_conf({
    "cidr_allocator": {"driver": "db", "pool_cidrs": "10.30.0.0/16",
                       "subnet_prefixlen": 24},
    "cidr_allocator_database": {
        "connection": url, "max_retries": 1, "call_timeout": 1,
        "connection_parameters": "connect_timeout=1&read_timeout=2"}})
driver = allocator.get_allocator(conf)
callback = extensions.get_wait_callback()
start = time.monotonic()
try:
    driver.allocate("network-1", scope="router-1")
    error = None
except Exception as e:
    error = "%s: %s" % (type(e).__name__, e)
seconds = time.monotonic() - start
# The host's own connections: still under eventlet's callback, unbounded
# by murano-cidr (a green timeout of the test's own ends this one).
try:
    with eventlet.Timeout(3):
        psycopg2.connect(host="127.0.0.1", port=listener.getsockname()[1],
                         dbname="murano", user="nobody", connect_timeout=1)
    host_connect = "returned"
except eventlet.Timeout:
    host_connect = "still waiting after 3 s"
except Exception as e:
    host_connect = "%s: %s" % (type(e).__name__, e)
print(json.dumps({
    "error": error, "seconds": seconds, "host_connect": host_connect,
    "callback_kept": extensions.get_wait_callback() is callback,
    "callback": getattr(callback, "__module__", None)}))
"""


def run_engine():
    """Run the patched engine; return what it printed."""
    try:
        done = subprocess.run([sys.executable, "-c", ENGINE],
                              capture_output=True, text=True,
                              timeout=WATCHDOG)
    except subprocess.TimeoutExpired:
        raise AssertionError("the engine's first call did not end within "
                             "%d s: unbounded" % WATCHDOG)
    if done.returncode:
        raise AssertionError("the engine failed:\n%s" % done.stderr)
    return json.loads(done.stdout.splitlines()[-1])


class TestGreenConnect(base.TestCase):

    def test_the_first_call_ends_typed(self):
        result = run_engine()
        self.assertEqual("eventlet.support.psycopg2_patcher",
                         result["callback"])
        self.assertIsNotNone(result["error"], result)
        self.assertTrue(result["error"].startswith("DatabaseUnavailable:"),
                        result)
        self.assertIn("timeout expired (connect_timeout=1 s", result["error"])
        # Nothing process-wide changed: the callback is eventlet's, and a
        # connection of the host's own is not bounded by murano-cidr.
        self.assertTrue(result["callback_kept"], result)
        self.assertEqual("still waiting after 3 s", result["host_connect"])
