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

"""An install without git metadata keeps every file of the package.

Distributions build from ``git archive`` tarballs with ``PBR_VERSION`` set,
where pbr cannot ask git which files belong to the package. This test does
the same with the committed tree (``HEAD``): it unpacks ``git archive HEAD``
without its ``.git``, installs it with pip into a new virtual environment,
offline (``--no-index --no-deps --no-build-isolation``: the build tools and
the dependencies are this test environment's own, made visible by a
``.pth`` file), checks that every tracked file of the package was
installed, and runs the installed ``murano-cidr-manage db sync`` on an
SQLite file, which needs the alembic tree.
"""

import os
import site
import subprocess
import tarfile
import venv

import murano_cidr
from murano_cidr.operator.drivers.db import revisions
from murano_cidr.tests import base

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(
    murano_cidr.__file__)))
PACKAGE = "murano_cidr"
#: Generous: the install takes a few seconds.
WATCHDOG = 300


def _git(*args):
    return subprocess.run(("git", "-C", SOURCE) + args, check=True,
                          capture_output=True, text=True,
                          timeout=WATCHDOG).stdout


def _is_git_tree():
    try:
        return _git("rev-parse", "--is-inside-work-tree").strip() == "true"
    except (OSError, subprocess.SubprocessError):
        return False


class InstallWithoutGitTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.require_service(_is_git_tree(),
                             "a git checkout of murano-cidr at %s" % SOURCE)
        self.tree = os.path.join(self.state_path, "src")
        self.env = os.path.join(self.state_path, "venv")

    def _unpack_archive(self):
        archive = os.path.join(self.state_path, "murano-cidr.tar")
        _git("archive", "--format=tar", "-o", archive, "HEAD")
        with tarfile.open(archive) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(self.tree, filter="data")
            else:
                tar.extractall(self.tree)
        self.assertFalse(os.path.exists(os.path.join(self.tree, ".git")))

    def _make_env(self):
        venv.EnvBuilder(with_pip=False).create(self.env)
        python = os.path.join(self.env, "bin", "python")
        purelib = subprocess.run(
            (python, "-c",
             "import sysconfig; print(sysconfig.get_paths()['purelib'])"),
            check=True, capture_output=True, text=True,
            timeout=WATCHDOG).stdout.strip()
        # NOTE: the new environment's own site-packages come first, so the
        # package installed there shadows the one under test.
        with open(os.path.join(purelib, "test-environment.pth"), "w") as f:
            f.write("\n".join(site.getsitepackages()) + "\n")
        return python, purelib

    def _run(self, *args, **env):
        return subprocess.run(
            args, capture_output=True, text=True, timeout=WATCHDOG,
            cwd=self.state_path, env=dict(os.environ, **env))

    def test_archive_install_has_the_package_data(self):
        self._unpack_archive()
        python, purelib = self._make_env()
        done = self._run(python, "-m", "pip", "install", "--no-index",
                         "--no-deps", "--no-build-isolation", "--quiet",
                         self.tree, PBR_VERSION="1.0.0")
        self.assertEqual(0, done.returncode, done.stderr)

        tracked = _git("ls-files", "--", PACKAGE).splitlines()
        self.assertIn(PACKAGE + "/operator/drivers/db/alembic/script.py.mako",
                      tracked)
        missing = [path for path in tracked
                   if not os.path.isfile(os.path.join(purelib, path))]
        self.assertEqual([], missing)

        where = self._run(python, "-c",
                          "import murano_cidr; print(murano_cidr.__file__)")
        self.assertTrue(where.stdout.startswith(purelib), where.stdout)

        conf = os.path.join(self.state_path, "install.conf")
        with open(conf, "w") as f:
            f.write("[cidr_allocator]\ndriver = db\nstate_path = %s\n"
                    "[cidr_allocator_database]\n"
                    "connection = sqlite:///%s/install.db\n"
                    % (self.state_path, self.state_path))
        manage = os.path.join(self.env, "bin", "murano-cidr-manage")
        synced = self._run(manage, "--config-file", conf, "db", "sync")
        self.assertEqual(0, synced.returncode, synced.stderr)
        version = self._run(manage, "--config-file", conf, "db", "version")
        self.assertEqual(0, version.returncode, version.stderr)
        self.assertEqual(revisions.head_revision(),
                         version.stdout.strip())
