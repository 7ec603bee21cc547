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

"""The engine processes of the functional tests run in the runtime asked."""

from murano_cidr.tests import base
from murano_cidr.tests.functional import runtimes

#: Seconds an interpreter may take to start and answer.
WATCHDOG = 60


class TestRuntimes(base.TestCase):

    def _child(self, runtime):
        spawn = runtimes.get_context(runtime)
        replies = spawn.Queue()
        process = spawn.Process(target=runtimes.describe, args=(replies,),
                                daemon=True)
        process.start()
        self.addCleanup(process.join, WATCHDOG)
        return replies.get(timeout=WATCHDOG)

    def test_plain(self):
        self.assertEqual(runtimes.PLAIN, runtimes.current())
        self.assertEqual(runtimes.PLAIN, self._child(runtimes.PLAIN)
                         ["runtime"])

    def test_patched_before_anything_is_imported(self):
        # multiprocessing itself was imported after the patch: its pipes
        # are read by eventlet's os.read, as Murano's would be.
        self.assertEqual({"runtime": runtimes.PATCHED, "green_pipes": True},
                         self._child(runtimes.PATCHED))
        # A plain child started after a patched one is plain.
        self.assertEqual(runtimes.PLAIN, self._child(runtimes.PLAIN)
                         ["runtime"])
