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
