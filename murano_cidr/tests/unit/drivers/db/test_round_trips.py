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

"""Statements and round trips of the db driver on SQLite."""

import sys
import threading
from unittest import mock

from murano_cidr.tests import round_trips
from murano_cidr.tests.unit.drivers.db import base


class TestRoundTrips(round_trips.RoundTripTests, base.DbTestCase):

    def test_yields_at_check_in_under_eventlet(self):
        green = mock.Mock()
        green.patcher.is_monkey_patched.return_value = True
        with mock.patch.dict(sys.modules, {"eventlet": green}), \
                mock.patch("time.sleep") as sleep:
            self.driver.confirm("warm-up")
        sleep.assert_called_once_with(0)
        green.patcher.is_monkey_patched.assert_called_with("thread")

    def test_every_thread_s_writes_share_the_kept_connection(self):
        outcome = []

        def allocate():
            try:
                outcome.append(self.count(self.driver.allocate, "net-1",
                                          scope="r"))
            except Exception as e:
                outcome.append(e)

        thread = threading.Thread(target=allocate)
        thread.start()
        thread.join(60)
        _statements, calls, connects = outcome[0]
        self.assertEqual(self.expected(writes=1), (calls, connects))

    def test_a_failed_write_closes_it_and_the_next_opens_another(self):
        def failing():
            raise RuntimeError("Neutron did not answer")

        self.assertRaises(RuntimeError, self.driver.allocate, "net-1",
                          scope="r", taken=failing)
        _statements, calls, connects = self.count(self.driver.confirm,
                                                  "warm-up")
        self.assertEqual(({"commit": 1}, 1), (calls, connects))
        _statements, calls, connects = self.count(self.driver.confirm,
                                                  "warm-up")
        self.assertEqual(({"commit": 1}, 0), (calls, connects))
