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

"""SQLite on a read-only or full file system says so, and loses nothing.

Each scenario runs in a mount namespace of its own (``unshare -m``, so
nothing is mounted on the machine): the state directory is a small tmpfs,
``db sync`` and an allocation run on it, then the file system is remounted
read-only (``mount -o remount,ro``, as an operator or the kernel after
errors does) or filled (a file written until ``ENOSPC``), the commands run
again, the fault is cleared and ``list`` shows what was recorded before.
Each command is the console script's ``main`` in a process of its own,
forked from one that imported murano-cidr once (the scenario's, which
opens no database itself, so the remount is not refused as busy). The
tests need root (``mount``), as CI has.
"""

import contextlib
import json
import os
import shutil
import subprocess
import sys

from murano_cidr.operator.cmd import cli
from murano_cidr.operator.cmd import manage
from murano_cidr.tests import base


def _command(out_dir, name, main, argv):
    """Run ``main(argv)`` in a forked process; keep its code and output."""
    paths = [os.path.join(out_dir, "%s.%s" % (name, kind))
             for kind in ("out", "err")]
    pid = os.fork()
    if pid == 0:  # the command's process
        code = 99
        try:
            with open(paths[0], "w") as out, open(paths[1], "w") as err, \
                    contextlib.redirect_stdout(out), \
                    contextlib.redirect_stderr(err):
                code = main(argv)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    result = [base.exit_code(status)]
    for path in paths:
        with open(path) as f:
            result.append(f.read())
    return result


def scenario(mount_point, out_dir, conf, fault):
    """The scenario, run in the new mount namespace; writes results.json.

    :param fault: ``ro`` (remount read-only) or ``full`` (fill it).
    """
    def mount(*args):
        subprocess.run(("mount",) + args, check=True)

    mount("--make-rprivate", "/")
    mount("-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", mount_point)
    config = ["--config-file", conf]
    results = {}

    def run(name, main, *args):
        results[name] = _command(out_dir, name, main, config + list(args))

    run("sync", manage.main, "db", "sync")
    run("first", cli.main, "allocate", "net-1", "--scope", "r")
    fill = os.path.join(mount_point, "fill")
    if fault == "ro":
        mount("-o", "remount,ro", mount_point)
    else:
        with contextlib.suppress(OSError), open(fill, "wb",
                                                buffering=0) as f:
            while True:  # until ENOSPC
                f.write(b"\0" * 4096)
    run("list", cli.main, "list")
    run("second", cli.main, "allocate", "net-2", "--scope", "r")
    if fault == "ro":
        mount("-o", "remount,rw", mount_point)
    else:
        os.unlink(fill)
    run("after", cli.main, "list")
    subprocess.run(["umount", mount_point], check=True)
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(results, f)


class TestSqliteFaults(base.TestCase):

    def setUp(self):
        super().setUp()
        self.require_service(
            os.geteuid() == 0 and shutil.which("unshare") is not None
            and shutil.which("mount") is not None,
            "root, unshare and mount (a private mount namespace)")

    def scenario(self, fault):
        mount_point = os.path.join(self.state_path, "mnt")
        out = os.path.join(self.state_path, "out")
        os.mkdir(mount_point)
        os.mkdir(out)
        conf = os.path.join(self.state_path, "murano.conf")
        with open(conf, "w") as f:
            f.write("[cidr_allocator]\ndriver = db\nstate_path = %s\n"
                    % os.path.join(mount_point, "state"))
        code = ("import sys; from murano_cidr.tests.functional.db import "
                "test_sqlite_faults as t; t.scenario(*sys.argv[1:])")
        done = subprocess.run(
            ["unshare", "-m", sys.executable, "-c", code, mount_point, out,
             conf, fault], timeout=120, capture_output=True, text=True)
        self.assertEqual(0, done.returncode, done.stderr)
        with open(os.path.join(out, "results.json")) as f:
            results = json.load(f)
        self.assertEqual(0, results["sync"][0], results["sync"])
        self.assertEqual(0, results["first"][0], results["first"])
        cidr = results["first"][1].strip()
        # Nothing lost: what was recorded before the fault is there after.
        code, listed, err = results["after"]
        self.assertEqual(0, code, err)
        self.assertIn("net-1  %s" % cidr, listed)
        self.assertNotIn("net-2", listed)
        return results

    def assertOneLine(self, result, code, *texts):
        got, _out, err = result
        self.assertEqual(code, got, err)
        self.assertEqual(1, len(err.strip().splitlines()), err)
        for text in texts:
            self.assertIn(text, err)
        self.assertNotIn("does not exist", err)

    def test_read_only_file_system(self):
        results = self.scenario("ro")
        for name in ("list", "second"):
            self.assertOneLine(results[name], 4, "cannot be written",
                               "mounted read-only", "Nothing was changed")

    def test_full_file_system(self):
        results = self.scenario("full")
        self.assertOneLine(results["second"], 5, "has no space left",
                           "Nothing was changed")
