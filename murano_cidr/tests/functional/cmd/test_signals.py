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

"""Long commands end cleanly on SIGINT, SIGTERM and SIGHUP.

Each test starts a command as an operator does, in a new process (and a
session of its own, as a terminal's job), waits until it runs (its worker
processes exist, or it has opened the FIFO it reads), sends a real signal
and checks what is left: the exit code 128 + N, one line on standard
error and no traceback, no process the command started, no temporary
directory. Ctrl-C and a closing terminal signal the whole process group,
``kill`` the command alone; both are tested.
"""

import glob
import os
import signal
import subprocess
import sys
import time

import fixtures

from murano_cidr.operator.cmd import interrupts
from murano_cidr.tests import base
from murano_cidr.tests import db_fixture

#: Seconds a command may take to start, or to end after a signal, before
#: the test fails: many times what either takes on a loaded machine.
WATCHDOG = 120.0

#: Seconds between two looks at the processes while waiting.
POLL = 0.05


def _parents():
    """Return ``{pid: parent pid}`` of every running process (Linux)."""
    parents = {}
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                text = f.read()
        except OSError:
            continue
        # pid (comm) state ppid ...; comm may hold spaces and parentheses.
        fields = text.rpartition(")")[2].split()
        if fields[0] != "Z":
            parents[int(text.split(" ", 1)[0])] = int(fields[1])
    return parents


def descendants(pid):
    """Return the live processes started by ``pid``, at any depth."""
    parents = _parents()
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        children = {p for p, pp in parents.items() if pp == parent}
        todo.extend(children - found)
        found |= children
    return found


def alive(pids):
    """Return those of ``pids`` still running (zombies are not)."""
    return set(pids) & set(_parents())


def reading_a_pipe(pid):
    """Tell whether ``pid`` waits to read a pipe or FIFO (Linux).

    In read(), or in select() before it
    (murano_cidr.operator.operations.files).
    """
    try:
        with open("/proc/%d/wchan" % pid) as f:
            wchan = f.read()
    except OSError:
        return False
    return wchan.endswith("pipe_read") or wchan.startswith(
        ("do_select", "poll_schedule_timeout"))


def wait_for(predicate, what):
    """Poll ``predicate()`` until it is true, or fail after the watchdog."""
    deadline = time.monotonic() + WATCHDOG
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("%s did not happen within %d s"
                                 % (what, WATCHDOG))
        time.sleep(POLL)


def _as_a_terminal_starts_it():
    # NOTE: a shell without job control starts its background jobs (a CI
    # script's, a helper's) with SIGINT ignored, the test runner inherits
    # that, and an ignored signal rightly stays ignored in the command.
    # An operator's command starts with the default handlers.
    for number in interrupts.SIGNALS:
        signal.signal(number, signal.SIG_DFL)


class SignalTestCase(base.TestCase):
    """Start a command, signal it, check what it leaves."""

    def setUp(self):
        super().setUp()
        # The command's temporary files go here, and nowhere else.
        self.tmp = self.useFixture(fixtures.TempDir()).path

    def start(self, *argv):
        """Start ``murano-cidr ARGV`` in a new session."""
        env = dict(os.environ, TMPDIR=self.tmp)
        proc = subprocess.Popen(
            [sys.executable, "-m", "murano_cidr.operator.cmd.cli"]
            + list(argv),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=env, start_new_session=True,
            preexec_fn=_as_a_terminal_starts_it)
        self.addCleanup(self._kill, proc)
        return proc

    @staticmethod
    def _kill(proc):
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    def wait_for_workers(self, proc, count):
        """Wait until ``proc`` has started ``count`` processes."""
        def started():
            if proc.poll() is not None:
                raise AssertionError("the command ended early (%s): %s" % (
                    proc.returncode, proc.stderr.read().decode()))
            return len(descendants(proc.pid)) >= count
        wait_for(started, "%d worker processes" % count)

    def interrupt(self, proc, signum, group=False):
        """Send ``signum``, check the command ended cleanly.

        :param group: signal the command's whole process group, as a
            terminal does, instead of the command alone.
        :returns: the standard output.
        """
        started = descendants(proc.pid)
        if group:
            os.killpg(proc.pid, signum)
        else:
            os.kill(proc.pid, signum)
        out, err = proc.communicate(timeout=WATCHDOG)
        err = err.decode()
        self.assertEqual(128 + signum, proc.returncode, err)
        self.assertNotIn("Traceback", err)
        self.assertEqual("murano-cidr: interrupted by %s\n"
                         % signal.Signals(signum).name, err)
        wait_for(lambda: not alive(started),
                 "the end of the processes the command started")
        self.assertEqual([], os.listdir(self.tmp))
        return out


class TestMeasuringTools(SignalTestCase):
    """simulate and bench, and their worker processes."""

    K = 2

    def simulate(self, *argv):
        proc = self.start("simulate", "--drivers", "legacy,lock", "-k",
                          str(self.K), "--trials", "1000000", "--quiet",
                          *argv)
        # K engines and multiprocessing's resource tracker.
        self.wait_for_workers(proc, self.K + 1)
        self.assertEqual(1, len(glob.glob(
            os.path.join(self.tmp, "murano-cidr-simulate-*"))))
        return proc

    def test_simulate_ctrl_c(self):
        self.interrupt(self.simulate(), signal.SIGINT, group=True)

    def test_simulate_sigterm(self):
        self.interrupt(self.simulate(), signal.SIGTERM)

    def test_simulate_sighup_of_a_closing_terminal(self):
        self.interrupt(self.simulate(), signal.SIGHUP, group=True)

    # NOTE: the largest run bench accepts (2 × 2,048 allocations fill its
    # pool of 4,096): over a minute, measured, where the signal comes
    # once the workers have started.
    def test_bench_sigterm(self):
        proc = self.start("bench", "--backends", "lock-file", "--workers",
                          "2", "--allocations", "2048", "--no-pool-math",
                          "--quiet")
        self.wait_for_workers(proc, 3)
        self.interrupt(proc, signal.SIGTERM)

    def test_bench_ctrl_c(self):
        proc = self.start("bench", "--backends", "db-sqlite", "--workers",
                          "2", "--allocations", "2048", "--no-pool-math",
                          "--quiet")
        self.wait_for_workers(proc, 3)
        self.interrupt(proc, signal.SIGINT, group=True)


class TestOperations(SignalTestCase):
    """import, prune and reconcile, waiting on a file that never ends."""

    def setUp(self):
        super().setUp()
        db = self.use_database(db_fixture.SQLITE, sync=True)
        self.conf_file = self.db_config_file(db)
        self.fifo = os.path.join(self.state_path, "input.json")
        os.mkfifo(self.fifo)

    def reading(self, *argv):
        """Start a command and wait until it waits to read the FIFO."""
        proc = self.start("--config-file", self.conf_file, *argv)
        # Opening a FIFO for writing returns once its reader opened it.
        writer = os.open(self.fifo, os.O_WRONLY)
        self.addCleanup(os.close, writer)
        os.write(writer, b"[")
        # A signal just before the read ends it too (the unit test
        # test_a_signal_the_read_does_not_see_still_ends_it); here the
        # command is signalled as an operator's Ctrl-C would find it.
        wait_for(lambda: reading_a_pipe(proc.pid), "a blocking read")
        return proc

    def test_import_sigterm(self):
        self.interrupt(self.reading("import", self.fifo), signal.SIGTERM)

    def test_prune_ctrl_c(self):
        self.interrupt(self.reading("prune", "--live-owners", self.fifo),
                       signal.SIGINT, group=True)

    def test_reconcile_sighup(self):
        ports = os.path.join(self.state_path, "ports")
        os.mkdir(ports)
        self.interrupt(self.reading("reconcile", "--subnets", self.fifo,
                                    "--ports-dir", ports), signal.SIGHUP)
