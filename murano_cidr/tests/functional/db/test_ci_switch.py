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

"""A missing database skips on a laptop and fails in CI."""

import fixtures
from oslo_db import exception as db_exc
import testtools

from murano_cidr.tests import base
from murano_cidr.tests import db_fixture


class TestRequiredInCI(testtools.TestCase):

    def run_inner(self, **environ):
        for name in ("CI", "MURANO_CIDR_REQUIRE_SERVICES"):
            self.useFixture(fixtures.EnvironmentVariable(
                name, environ.get(name)))
        self.useFixture(fixtures.MockPatch(
            "oslo_db.sqlalchemy.provision.Backend."
            "backend_for_database_type",
            side_effect=db_exc.BackendNotAvailable("no such server (test)")))

        class Inner(base.TestCase):

            def test_needs_the_database(self):
                self.use_database(db_fixture.MYSQL)

        result = testtools.TestResult()
        Inner("test_needs_the_database").run(result)
        return result

    def test_skips_on_a_laptop(self):
        result = self.run_inner()
        self.assertTrue(result.wasSuccessful())
        [reason] = list(result.skip_reasons)
        self.assertIn("no such server (test)", reason)

    def test_fails_when_services_are_required(self):
        for environ in ({"MURANO_CIDR_REQUIRE_SERVICES": "1"},
                        {"CI": "true"}):
            result = self.run_inner(**environ)
            self.assertFalse(result.wasSuccessful())
            self.assertEqual({}, result.skip_reasons)
            self.assertEqual(1, len(result.failures))
            self.assertIn("no such server (test)",
                          str(result.failures[0][1]))
