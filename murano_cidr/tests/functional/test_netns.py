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

"""The network-namespace test hosts and their faults do what they say."""

import multiprocessing
import os
import socket
import subprocess
import sys
import time

import fixtures
import testtools

from murano_cidr.tests import base
from murano_cidr.tests.functional import netns
from murano_cidr.tests.functional import netns_plumbing
from murano_cidr.tests.functional import netns_reaper
from murano_cidr.tests.functional import slowlink

PORT = 7777

# An echo server: answers each line with the same line.
ECHO = """
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(16)
while True:
    c, _ = s.accept()
    f = c.makefile("rwb", buffering=0)
    for line in f:
        f.write(line)
    c.close()
"""


def echo(address, port, timeout=2):
    """Send a line to the echo server and return its answer."""
    with socket.create_connection((address, port), timeout=timeout) as s:
        s.sendall(b"ping\n")
        return s.makefile("rb").readline()


def _client_echo(name, address, port, results):
    netns.enter(name)
    try:
        results.put(echo(address, port))
    except socket.timeout:
        results.put("timeout")
    except OSError as e:
        results.put(type(e).__name__)


class NetnsTest(base.TestCase):

    def setUp(self):
        super().setUp()
        netns.require(self)
        self.host = self.useFixture(netns.ServerHost())
        self.host.popen([sys.executable, "-c", ECHO, self.host.address,
                         str(PORT)])
        self.answer()

    def answer(self):
        for _ in range(100):
            try:
                return echo(self.host.address, PORT)
            except OSError:
                time.sleep(0.1)
        self.fail("the echo server in %s did not answer" % self.host.name)

    def in_client(self, client):
        context = multiprocessing.get_context("spawn")
        results = context.Queue()
        process = context.Process(target=_client_echo, args=(
            client.name, self.host.address, PORT, results))
        process.start()
        self.addCleanup(process.join, 10)
        return results.get(timeout=30)

    def test_blackhole_then_heal(self):
        self.assertEqual(b"ping\n", echo(self.host.address, PORT))
        self.host.blackhole()
        self.assertRaises(socket.timeout, echo, self.host.address, PORT, 1)
        self.host.heal()
        self.assertEqual(b"ping\n", echo(self.host.address, PORT))

    def test_one_client_partitioned(self):
        cut, other = self.host.add_client(), self.host.add_client()
        self.assertEqual(b"ping\n", self.in_client(cut))
        self.host.partition(cut)
        self.assertEqual("timeout", self.in_client(cut))
        self.assertEqual(b"ping\n", self.in_client(other))
        self.assertEqual(b"ping\n", echo(self.host.address, PORT))
        self.host.heal()
        self.assertEqual(b"ping\n", self.in_client(cut))

    def test_slow_link_delays_answers(self):
        proxy = self.useFixture(slowlink.DelayProxy(self.host.address,
                                                    PORT, 3))
        self.assertRaises(socket.timeout, echo, "127.0.0.1", proxy.port, 1)
        proxy.delay = 0
        self.assertEqual(b"ping\n", echo("127.0.0.1", proxy.port))

    def test_loss_rules_in_the_servers_namespace_only(self):
        self.host.loss(0.3)
        rules = self.host.run("iptables", "-S")
        self.assertEqual(2, rules.count("--probability"))
        self.host.heal()
        self.assertNotIn("DROP", self.host.run("iptables", "-S"))


class CleanupTest(base.TestCase):

    def test_a_failed_test_leaves_no_namespace_and_no_server(self):
        netns.require(self)
        made = []

        class Failing(base.TestCase):
            def test(self):
                host = self.useFixture(netns.ServerHost())
                client = host.add_client()
                made.append((host, client, host.popen(["sleep", "600"])))
                self.fail("failing on purpose")

        result = testtools.TestResult()
        Failing("test").run(result)
        self.assertEqual(1, len(result.failures))
        host, client, server = made[0]
        self.assertIsNotNone(server.poll())
        names = subprocess.run(["ip", "netns", "list"],
                               stdout=subprocess.PIPE,
                               universal_newlines=True).stdout
        self.assertNotIn(host.name, names)
        self.assertNotIn(client.name, names)
        self.assertFalse(os.path.exists("/run/netns/" + host.name))


class SweepTest(base.TestCase):

    def test_namespaces_of_killed_test_processes_are_deleted(self):
        netns.require(self)
        with open("/proc/sys/kernel/pid_max") as f:
            dead = int(f.read()) - 1
        while os.path.exists("/proc/%d" % dead):
            dead -= 1
        stale = "%s-%d-beef-s" % (netns_plumbing.PREFIX, dead)
        subprocess.run(["ip", "netns", "add", stale], check=True)
        self.addCleanup(subprocess.run, ["ip", "netns", "del", stale],
                        stderr=subprocess.DEVNULL)
        self.useFixture(netns.ServerHost())
        self.assertFalse(os.path.exists("/run/netns/" + stale))


# A test process that sets up a host, starts a server in it, says so and
# waits to be killed.
KILLED_TEST = """
import fixtures, sys
from murano_cidr.tests.functional import netns
with fixtures.Fixture() as test:
    host = test.useFixture(netns.ServerHost())
    server = host.popen(["sleep", "600"])
    reaper = getattr(host, "_reaper", None)  # None before the reaper came
    print(host.name, server.pid, reaper.pid if reaper else 0, flush=True)
    sys.stdin.read()
"""

# A test process whose worker (in the machine's namespace) waits on its
# queue; the test process says so and waits to be killed.
KILLED_WITH_WORKER = """
import multiprocessing, sys
from murano_cidr.tests.functional import test_netns
context = multiprocessing.get_context(sys.argv[1])
commands = context.Queue()
worker = context.Process(target=test_netns.waiting_worker, args=(commands,))
worker.start()
print(worker.pid, commands.get(), flush=True)
sys.stdin.read()
"""


def waiting_worker(commands):
    """A test's worker: says it is ready, then waits for a command."""
    netns_reaper.exit_with_test()
    commands.put("ready")
    commands.get()  # never comes


def _kill_worker(pid):
    """Kill a worker the test left behind (if it is still that worker)."""
    try:
        with open("/proc/%s/cmdline" % pid) as f:
            if "multiprocessing" in f.read():
                os.kill(int(pid), 9)
    except OSError:
        pass


#: Seconds the reaper may take (a few ``ip`` commands).
REAPER_WATCHDOG = 60


class KilledTestProcessTest(base.TestCase):

    def test_a_killed_test_process_leaves_no_namespace_or_server(self):
        netns.require(self)
        test = subprocess.Popen([sys.executable, "-c", KILLED_TEST],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                universal_newlines=True)
        self.addCleanup(test.wait)
        self.addCleanup(test.kill)
        name, server, reaper = test.stdout.readline().split()
        test.kill()  # SIGKILL: no cleanup runs in it
        test.wait()
        deadline = time.monotonic() + REAPER_WATCHDOG
        while (os.path.exists("/proc/" + reaper)
               and time.monotonic() < deadline):
            time.sleep(0.1)
        self.assertFalse(os.path.exists("/run/netns/" + name))
        self.assertFalse(os.path.exists("/proc/" + server)
                         and "sleep" in open("/proc/%s/cmdline" % server
                                             ).read())

    def test_a_killed_test_process_leaves_no_worker(self):
        for context in ("forkserver", "spawn"):
            test = subprocess.Popen(
                [sys.executable, "-c", KILLED_WITH_WORKER, context],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                universal_newlines=True)
            self.addCleanup(test.wait)
            self.addCleanup(test.kill)
            worker = test.stdout.readline().split()[0]
            self.addCleanup(_kill_worker, worker)
            test.kill()
            test.wait()
            deadline = time.monotonic() + REAPER_WATCHDOG
            while (os.path.exists("/proc/" + worker)
                   and time.monotonic() < deadline):
                time.sleep(0.1)
            self.assertFalse(os.path.exists("/proc/" + worker), context)


class RequireTest(base.TestCase):

    def test_missing_tools_skip_or_fail_in_ci(self):
        self.useFixture(fixtures.MonkeyPatch(
            "murano_cidr.tests.functional.netns.missing", lambda: "root"))
        self.useFixture(fixtures.EnvironmentVariable(
            "MURANO_CIDR_REQUIRE_SERVICES", "1"))
        e = self.assertRaises(self.failureException, netns.require, self)
        self.assertIn("network namespaces (root)", str(e))
