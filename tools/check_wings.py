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

"""Check the wings' import contracts, and that they can fail.

``tox -e pep8`` runs it: import-linter checks ``.importlinter`` on the tree,
then on a copy of the tree whose engine imports the operator's wing inside a
function, where the engine's contract must be reported broken. A contract
that passes both has stopped checking anything.
"""

import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WRONG = ("murano_cidr/engine/allocator.py",
         "\n\ndef _wrong():\n    from murano_cidr.operator import confutils"
         "\n    return confutils\n")
BROKEN = "The engine's wing imports neither the operator's nor the " \
    "measuring one BROKEN"


def lint(tree):
    """Run import-linter on ``tree``; return its exit code and output."""
    done = subprocess.run(
        ["lint-imports", os.path.join(ROOT, ".importlinter"), "--no-cache"],
        cwd=tree, capture_output=True, text=True,
        env=dict(os.environ, PYTHONPATH=tree))
    return done.returncode, done.stdout + done.stderr


def main():
    code, out = lint(ROOT)
    if code:
        sys.exit(out)
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(os.path.join(ROOT, "murano_cidr"),
                        os.path.join(tmp, "murano_cidr"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        with open(os.path.join(tmp, WRONG[0]), "a") as f:
            f.write(WRONG[1])
        code, out = lint(tmp)
    if code == 0 or BROKEN not in out:
        sys.exit("import-linter did not catch an engine module importing "
                 "the operator's wing:\n" + out)
    print("Import contracts kept; a wrong import in the engine is caught.")


if __name__ == "__main__":
    main()
