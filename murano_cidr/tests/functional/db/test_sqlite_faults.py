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

Each scenario runs the console scripts in a mount namespace of its own
(``unshare -m``, so nothing is mounted on the machine): the state directory
is a small tmpfs, ``db sync`` and an allocation run on it, then the file
system is remounted read-only (``mount -o remount,ro``, as an operator or
the kernel after errors does) or filled (a file written until ``ENOSPC``),
the commands run again, the fault is cleared and ``list`` shows what was
recorded before. The tests need root (``mount``), as CI has.
"""

import os
import shutil
import subprocess
import sys

from murano_cidr.tests import base

#: The scenario, run by ``sh`` in the new mount namespace. $1: the mount
#: point, $2: where results go, $3: the configuration file, $4: Python,
#: $5: the fault (ro or full).
SCRIPT = r"""
set -u
M=$1 OUT=$2 CONF=$3 PY=$4 FAULT=$5
run() {
    name=$1; shift
    "$PY" -m "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
    echo $? >"$OUT/$name.rc"
}
mount --make-rprivate / && mount -t tmpfs -o size=1m,mode=0755 tmpfs "$M" \
    || exit 90
run sync murano_cidr.cmd.manage --config-file "$CONF" db sync
run first murano_cidr.cmd.cli --config-file "$CONF" allocate net-1 --scope r
if [ "$FAULT" = ro ]; then
    mount -o remount,ro "$M" || exit 91
else
    dd if=/dev/zero of="$M/fill" bs=4096 2>/dev/null
fi
run list murano_cidr.cmd.cli --config-file "$CONF" list
run second murano_cidr.cmd.cli --config-file "$CONF" allocate net-2 --scope r
if [ "$FAULT" = ro ]; then
    mount -o remount,rw "$M" || exit 92
else
    rm -f "$M/fill"
fi
run after murano_cidr.cmd.cli --config-file "$CONF" list
umount "$M"
"""


class TestSqliteFaults(base.TestCase):

    def setUp(self):
        super().setUp()
        unshare = shutil.which("unshare")
        self.require_service(
            os.geteuid() == 0 and unshare is not None
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
        done = subprocess.run(
            ["unshare", "-m", "sh", "-c", SCRIPT, "sh", mount_point, out,
             conf, sys.executable, fault],
            timeout=120, capture_output=True, text=True)
        self.assertEqual(0, done.returncode, done.stderr)
        results = {}
        for name in ("sync", "first", "list", "second", "after"):
            with open(os.path.join(out, name + ".rc")) as f:
                code = int(f.read())
            with open(os.path.join(out, name + ".out")) as f:
                stdout = f.read()
            with open(os.path.join(out, name + ".err")) as f:
                stderr = f.read()
            results[name] = (code, stdout, stderr)
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
