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

"""An eventlet engine's reservation never confirmed ends at its timeout.

Murano's engine is monkey-patched by eventlet. The engine here (a new
interpreter, ``eventlet.monkey_patch()`` first) reserves the only CIDR of
its pool on file locks and never confirms it, then goes on with green work
that yields. The test's own driver, another process on the same lock
directory, is given that CIDR once the engine's ``reservation_timeout``
has passed, while the engine still runs: the record expired, with no
timer of the engine's (the process never had a second OS thread).
"""

import json
import select
import subprocess
import sys
import time

from murano_cidr.engine import allocator
from murano_cidr import exceptions
from murano_cidr.tests import base

#: The engine's reservation_timeout, in seconds.
TIMEOUT = 1
#: A watchdog far above it (an interpreter starts in a few seconds).
WATCHDOG = 60

ENGINE = r"""
import eventlet
eventlet.monkey_patch()

import json
import os
import sys

from murano_cidr.engine import allocator
from murano_cidr.operator import confutils

state_path, cidr, timeout = sys.argv[1:]
conf = confutils.make_conf({
    "cidr_allocator": {"driver": "lock", "state_path": state_path,
                       "pool_cidrs": cidr, "subnet_prefixlen": 24,
                       "reservation_timeout": timeout}})
driver = allocator.get_allocator(conf)


def threads():
    return len(os.listdir("/proc/self/task"))


print(json.dumps({"cidr": driver.allocate("failed", scope="router-1"),
                  "threads": threads()}), flush=True)
sys.stdin.readline()  # alive, its driver open, until the test asks
print(json.dumps({"threads": threads()}), flush=True)
sys.stdin.read()
"""

CIDR = "10.31.0.0/24"


class TestGreenEngine(base.TestCase):

    def _line(self, engine):
        ready, _, _ = select.select([engine.stdout], [], [], WATCHDOG)
        self.assertTrue(ready, "the engine said nothing within %d s"
                        % WATCHDOG)
        line = engine.stdout.readline()
        self.assertTrue(line, "the engine ended")
        return json.loads(line)

    def test_its_record_expires_while_the_engine_runs(self):
        engine = subprocess.Popen(
            [sys.executable, "-c", ENGINE, self.state_path, CIDR,
             str(TIMEOUT)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True)
        self.addCleanup(engine.wait, WATCHDOG)
        self.addCleanup(engine.stdin.close)
        reserved = self._line(engine)
        self.assertEqual(CIDR, reserved["cidr"])
        self.config(driver="lock", pool_cidrs=[CIDR], subnet_prefixlen=24)
        driver = allocator.get_allocator(self.conf)
        self.addCleanup(driver.close)
        deadline = time.monotonic() + WATCHDOG
        while True:
            try:
                got = driver.allocate("next", scope="router-1")
                break
            except exceptions.PoolExhausted:
                self.assertLess(time.monotonic(), deadline,
                                "not dropped within %d s of its %d s "
                                "timeout" % (WATCHDOG, TIMEOUT))
                time.sleep(0.05)
        self.assertEqual(CIDR, got)
        self.assertIsNone(engine.poll(), "the engine ended")
        engine.stdin.write("\n")
        engine.stdin.flush()
        self.assertEqual({"threads": 1}, self._line(engine))
        self.assertEqual(1, reserved["threads"])
