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

"""Parallel picks on SQLite inside an eventlet engine take turns.

Murano's engine is monkey-patched by eventlet and deploys applications in
parallel green threads of one process. Each test runs such an engine in a
new interpreter (``eventlet.monkey_patch()`` first, as Murano's
``murano.monkey_patch`` does), where green threads allocate in one scope of
the embedded SQLite database through ``taken`` callables that wait for a
fake Neutron with a green sleep, with no retry after a locked database.
The child records what each pick returned and every transaction's begin
and end, and the test checks them: no pick met SQLite's busy timeout
(which fails it with ``DatabaseUnavailable``), no two transactions of the
process were open at once, and no two picks got the same CIDR. Before the
``db`` driver serialised its SQLite writers, every pick but the first
failed, each after blocking the whole engine for the busy timeout.
"""

import json
import subprocess
import sys
import tempfile

import fixtures

from murano_cidr.tests import base

#: Parallel picks of the engine.
PICKS = 4

#: A watchdog far above the picks' time (a few tenths of a second each,
#: or SQLite's 5 s busy timeout per collision without the fix).
WATCHDOG = 180

ENGINE = r"""
import eventlet
eventlet.monkey_patch()

import json
import sys
import time

import sqlalchemy as sa

from murano_cidr.engine import allocator
from murano_cidr.operator import confutils
from murano_cidr.operator.drivers.db import migration

state_path, picks, latency, retries = sys.argv[1:]
conf = confutils.make_conf({
    "cidr_allocator": {"driver": "db", "state_path": state_path,
                       "pool_cidrs": "10.30.0.0/16", "subnet_prefixlen": 24},
    "cidr_allocator_database": {"db_max_retries": retries}})
migration.upgrade(conf)
driver = allocator.get_allocator(conf)
events = []


def record(kind):
    def listener(*args):
        events.append([kind, id(eventlet.getcurrent())])
    return listener


for kind in ("begin", "commit", "rollback"):
    sa.event.listen(driver.database.engine, kind, record(kind))


def taken():
    eventlet.sleep(float(latency))  # Neutron answering the router's subnets
    return []


def pick(number):
    start = time.monotonic()
    try:
        cidr = driver.allocate("network-%d" % number, scope="router-1",
                               taken=taken)
    except Exception as e:
        cidr = "%s: %s" % (type(e).__name__, e)
    return cidr, time.monotonic() - start


start = time.monotonic()
picked = list(eventlet.GreenPool().imap(pick, range(int(picks))))
print(json.dumps({"cidrs": [cidr for cidr, _ in picked],
                  "seconds": [seconds for _, seconds in picked],
                  "total": time.monotonic() - start, "events": events,
                  "rows": len(driver.list(scope="router-1"))}))
"""


def run_engine(state_path, picks, latency=0.2, retries=0,
               watchdog=WATCHDOG):
    """Run the monkey-patched engine; return what it recorded.

    :param state_path: the directory of its SQLite database.
    :param picks: how many green threads allocate at once.
    :param latency: the fake Neutron's answer time, in seconds.
    :param retries: ``[cidr_allocator_database] db_max_retries``; with 0 a
        pick that meets SQLite's busy timeout fails.
    :returns: ``{"cidrs": [...], "seconds": [...], "total": s,
        "events": [[kind, thread], ...], "rows": n}``; a failed pick's
        CIDR is its error.
    """
    try:
        done = subprocess.run(
            [sys.executable, "-c", ENGINE, state_path, str(picks),
             str(latency), str(retries)], capture_output=True, text=True,
            timeout=watchdog)
    except subprocess.TimeoutExpired:
        raise AssertionError("the engine's %d picks did not end within %d s"
                             % (picks, watchdog))
    if done.returncode:
        raise AssertionError("the engine failed:\n%s" % done.stderr)
    return json.loads(done.stdout.splitlines()[-1])


def overlapping_transactions(events):
    """Return the begins that came while another transaction was open."""
    open_by, overlaps = None, []
    for kind, who in events:
        if kind == "begin":
            if open_by is not None:
                overlaps.append((open_by, who))
            open_by = who
        elif kind in ("commit", "rollback") and who == open_by:
            open_by = None
    return overlaps


class TestGreenPicks(base.TestCase):

    def test_parallel_green_picks_take_turns(self):
        result = run_engine(self.useFixture(fixtures.TempDir()).path, PICKS)
        # A pick that met the busy timeout is an error line, not a CIDR.
        self.assertEqual([], [c for c in result["cidrs"]
                              if not c.startswith("10.30.")])
        self.assertEqual([], overlapping_transactions(result["events"]))
        self.assertEqual(PICKS, len(set(result["cidrs"])), result["cidrs"])
        self.assertEqual(PICKS, result["rows"])

    def test_the_checker_sees_overlaps(self):
        events = [["begin", 1], ["begin", 2], ["rollback", 2],
                  ["commit", 1], ["begin", 2], ["commit", 2]]
        self.assertEqual([(1, 2)], overlapping_transactions(events))


def main(argv):
    """Time one engine's parallel picks once, with the default retries.

    ``python -m murano_cidr.tests.unit.drivers.db.test_eventlet [PICKS]``
    (the operations guide gives what it measured).
    """
    picks = int(argv[0]) if argv else 3
    with tempfile.TemporaryDirectory() as path:
        result = run_engine(path, picks, retries=20, watchdog=None)
    for cidr, seconds in zip(result["cidrs"], result["seconds"]):
        print("%6.2f s  %s" % (seconds, cidr))
    print("%6.2f s  all %d picks" % (result["total"], picks))


if __name__ == "__main__":
    main(sys.argv[1:])
