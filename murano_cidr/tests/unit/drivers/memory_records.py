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

"""Reservation records kept in memory, for unit tests without a service."""

import threading

from murano_cidr.engine.drivers.lock import backend
from murano_cidr import exceptions


class MemoryRecords(backend.RecordStore):
    """A record store in a dictionary, shared by the drivers given it.

    :ivar data: the records, by name.
    :ivar error: a :class:`~murano_cidr.exceptions.LockUnavailable` every
        call raises, if set.
    """

    def __init__(self):
        self.data = {}
        self.error = None
        self._mutex = threading.Lock()

    def _check(self):
        if self.error is not None:
            raise self.error

    def down(self, description="memory://records"):
        """Make every call fail as an unreachable service does."""
        self.error = exceptions.LockUnavailable(url=description,
                                                reason="Connection refused")

    def blocks(self):
        """Return the names of the block records (not owner indexes)."""
        return sorted(n for n in self.data if n.endswith("-reservation"))

    def read(self, name):
        self._check()
        data = self.data.get(name)
        return data, data

    def create(self, name, data, version, hold):
        self._check()
        with self._mutex:
            if self.data.get(name) != version:
                return False
            self.data[name] = data
            return True

    def delete(self, name, data):
        self._check()
        with self._mutex:
            if self.data.get(name) != data:
                return False
            del self.data[name]
            return True
