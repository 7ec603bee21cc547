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

"""An engine carries its wing only, on every path, and one pick reads short.

Every driver, on the back ends that need no server (``db`` on SQLite,
``lock`` on file locks): after a pick, a confirm and a release, and after
each typed error it can meet, the engine has imported at most
:data:`~murano_cidr.tests.engine_paths.LINE_LIMIT` lines of murano-cidr
(the ``db`` driver its figure of today, ``OVER_LIMIT``), all of the
engine's wing; one warm pick crosses at most
:data:`~murano_cidr.tests.engine_paths.TRANSITIONS` module boundaries.
The back ends on servers: tests/functional/db/test_engine_imports.py and
tests/functional/lock/test_engine_paths.py.
"""

import testscenarios

from murano_cidr.tests import base
from murano_cidr.tests import engine_paths

load_tests = testscenarios.load_tests_apply_scenarios

#: The ``db`` driver on an SQLite file gives up on a held database soon.
SHORT_WAIT = "[cidr_allocator_database]\ncall_timeout = 3\nmax_retries = 0\n"


class TestEnginePaths(base.TestCase):

    scenarios = [
        ("%s-%s" % (driver, path), {"driver": driver, "path": path})
        for driver, errors in sorted(engine_paths.ERRORS.items())
        for path in ("happy",) + errors]

    def test_carries_its_wing_only(self):
        report = engine_paths.engine_path(
            self, self.driver, self.path,
            conf=SHORT_WAIT if self.driver == "db" else "")
        engine_paths.assertCarriesItsWingOnly(
            self, report, self.path,
            engine_paths.OVER_LIMIT.get(self.driver, engine_paths.LINE_LIMIT))
