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
from oslo_db.sqlalchemy import test_fixtures
import testtools

from murano_cidr.tests import base as test_base
from murano_cidr.tests.functional.db import base


class _MissingFixture(test_fixtures.OpportunisticDbFixture):
    """A backend that is never there."""

    DRIVER = "mysql"

    def _generate_database_resource(self, _enginefacade):
        raise db_exc.BackendNotAvailable("no such server (test)")


class TestRequiredInCI(test_base.TestCase):

    def run_inner(self, **environ):
        for name in ("CI", "MURANO_CIDR_REQUIRE_SERVICES"):
            self.useFixture(fixtures.EnvironmentVariable(
                name, environ.get(name)))

        class Inner(base.RequiredInCI,
                    test_fixtures.OpportunisticDBTestMixin,
                    testtools.TestCase):
            FIXTURE = _MissingFixture

            def test_needs_the_database(self):
                pass

        result = testtools.TestResult()
        Inner("test_needs_the_database").run(result)
        return result

    def test_skips_on_a_laptop(self):
        result = self.run_inner()
        self.assertTrue(result.wasSuccessful())
        self.assertEqual(["no such server (test)"], list(result.skip_reasons))

    def test_fails_when_services_are_required(self):
        for environ in ({"MURANO_CIDR_REQUIRE_SERVICES": "1"},
                        {"CI": "true"}):
            result = self.run_inner(**environ)
            self.assertFalse(result.wasSuccessful())
            self.assertEqual({}, result.skip_reasons)
            self.assertEqual(1, len(result.failures))
            self.assertIn("no such server (test)",
                          str(result.failures[0][1]))
