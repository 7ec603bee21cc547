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

"""Live owners read from a Murano database (SQLite, Murano's tables)."""

import os

import sqlalchemy as sa

from murano_cidr import exceptions
from murano_cidr.operator.operations import murano_db
from murano_cidr.tests import base
from murano_cidr.tests import murano_db as murano_tables


class TestObjectIds(base.TestCase):

    def test_every_header_id_anywhere(self):
        model = murano_tables.object_model("env", "e", ["n1", "n2"])
        model["Attributes"] = [["n1", "cidrAllocated", True]]
        ids = murano_db.object_ids(model)
        self.assertLessEqual({"env", "n1", "n2"}, ids)
        self.assertEqual(4, len(ids))  # and the one application
        self.assertEqual(set(), murano_db.object_ids(
            {"?": {"id": 7}, "x": [{"?": "not a header"}]}))


class TestLiveOwners(base.TestCase):

    def setUp(self):
        super().setUp()
        self.url = "sqlite:///" + os.path.join(self.state_path, "murano.db")
        self.engine = sa.create_engine(self.url)
        self.addCleanup(self.engine.dispose)
        with self.engine.begin() as connection:
            murano_tables.create(connection)

    def test_environments_and_sessions(self):
        with self.engine.begin() as connection:
            murano_tables.add_environment(connection, "e1", "one",
                                          ["n1", "n2"])
            murano_tables.add_environment(connection, "e2", "two", ["n3"])
            murano_tables.add_session(connection, "e2", ["n4"])
        owners = murano_db.live_owners(self.url)
        self.assertLessEqual({"e1", "n1", "n2", "e2", "n3", "n4"}, owners)
        with self.engine.begin() as connection:
            murano_tables.remove_environment(connection, "e2")
        owners = murano_db.live_owners(self.url)
        self.assertLessEqual({"n1", "n2"}, owners)
        self.assertFalse({"e2", "n3", "n4"} & owners)

    def test_an_empty_murano_has_no_owners(self):
        self.assertEqual(frozenset(), murano_db.live_owners(self.url))

    def test_a_model_that_is_not_json_is_refused(self):
        with self.engine.begin() as connection:
            murano_tables.add_environment(connection, "e1", "one", ["n1"])
            connection.execute(murano_tables.environment.update().values(
                description="{not json"))
        e = self.assertRaises(exceptions.InvalidArgument,
                              murano_db.live_owners, self.url)
        self.assertIn("the description of environment e1 is not JSON",
                      str(e))

    def test_not_a_murano_database(self):
        path = os.path.join(self.state_path, "other.db")
        sa.create_engine("sqlite:///" + path).connect().close()
        e = self.assertRaises(exceptions.InvalidArgument,
                              murano_db.live_owners, "sqlite:///" + path)
        self.assertIn("has no table environment", str(e))

    def test_a_missing_sqlite_file_is_invalid_and_not_created(self):
        # Issue 32: exit 3 "unavailable", or an empty file created.
        for relative in ("missing.db", "no/such/dir/murano.db"):
            path = os.path.join(self.state_path, relative)
            e = self.assertRaises(exceptions.InvalidArgument,
                                  murano_db.live_owners, "sqlite:///" + path)
            self.assertIn("the SQLite file %s does not exist" % path, str(e))
            self.assertFalse(os.path.exists(path))

    def test_bad_and_unreachable_urls(self):
        e = self.assertRaises(exceptions.InvalidArgument,
                              murano_db.live_owners, "no-such-dialect://x")
        self.assertIn("is not a usable SQLAlchemy URL", str(e))
        e = self.assertRaises(
            exceptions.BackendUnavailable, murano_db.live_owners,
            "postgresql+psycopg2://murano:secret@127.0.0.1:1/murano")
        self.assertIn("murano:***@127.0.0.1:1/murano", str(e))
        self.assertNotIn("secret", str(e))

    def test_the_connection_refuses_writes(self):
        with murano_db.read_only_connection(self.url) as connection:
            self.assertRaises(sa.exc.DBAPIError, connection.execute,
                              murano_tables.environment.delete())
