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

"""A small in-memory driver that keeps state, for the operations tests."""

import datetime

import netaddr

from murano_cidr.engine import allocation as allocation_mod
from murano_cidr.engine.drivers import base
from murano_cidr.engine.drivers import capabilities as caps
from murano_cidr.engine import taken as taken_mod
from murano_cidr import exceptions
from murano_cidr.operator import errors


def allocation(owner, cidr, scope=None, age=None, now=None, **kwargs):
    """Build an Allocation created ``age`` (a timedelta) before ``now``."""
    created = None
    if age is not None:
        now = now or datetime.datetime.now(datetime.timezone.utc)
        created = now - age
    return allocation_mod.Allocation(
        owner=owner, cidr=cidr, scope=scope,
        ip_version=netaddr.IPNetwork(cidr).version, created_at=created,
        **kwargs)


class FakeStatefulDriver(base.AllocatorDriver):
    """Keeps allocations in a dictionary; imports all or nothing."""

    name = "fake"
    capabilities = frozenset({caps.Capability.KEEPS_STATE,
                              caps.Capability.SHARES_STATE,
                              caps.Capability.OUTLIVES_PROCESS,
                              caps.Capability.IMPORTS})

    def __init__(self, conf, allocations=()):
        super().__init__(conf)
        self.allocations = {a.owner: a for a in allocations}
        self.import_calls = 0
        self.closed = False
        #: How far the store's clock is ahead of the host's.
        self.clock_offset = datetime.timedelta(0)

    def now(self):
        return super().now() + self.clock_offset

    def _overlapping(self, cidr, scope, ip_version, exclude=None):
        net = netaddr.IPNetwork(cidr)
        for a in self.allocations.values():
            if (a.scope == scope and scope is not None
                    and a.ip_version == ip_version and a.owner != exclude):
                other = netaddr.IPNetwork(a.cidr)
                if other.first <= net.last and net.first <= other.last:
                    return a
        return None

    def allocate(self, owner, scope=None, taken=(), ip_version=4):
        allocation_mod.validate_id(owner, "owner")
        if owner in self.allocations:
            return self.allocations[owner].cidr
        pool = self.pool(ip_version)
        if callable(taken):
            taken = taken()
        held = [a.cidr for a in self.allocations.values()
                if a.scope == scope and scope is not None]
        free_map = pool.free_map(taken_mod.TakenSet.from_taken(
            list(taken) + held, pool.version))
        if free_map.free == 0:
            raise self.exhausted(pool, scope, free_map)
        cidr = pool.cidr(free_map.nth_free(0))
        self.allocations[owner] = allocation_mod.Allocation(
            owner, cidr, scope, ip_version, confirmed=False,
            created_at=datetime.datetime.now(datetime.timezone.utc))
        return cidr

    def confirm(self, owner):
        allocation_mod.validate_id(owner, "owner")
        a = self.allocations.get(owner)
        if a is not None:
            self.allocations[owner] = allocation_mod.Allocation(
                a.owner, a.cidr, a.scope, a.ip_version, True, a.created_at)

    def release(self, owner):
        allocation_mod.validate_id(owner, "owner")
        return self.allocations.pop(owner, None) is not None

    def get(self, owner):
        allocation_mod.validate_id(owner, "owner")
        return self.allocations.get(owner)

    def list(self, scope=None):
        return sorted((a for a in self.allocations.values()
                       if scope is None or a.scope == scope),
                      key=lambda a: (a.scope or "", netaddr.IPNetwork(
                          a.cidr).first))

    def import_allocations(self, allocations):
        self.import_calls += 1
        allocations = list(allocations)
        new = []
        for a in allocations:
            held = self.allocations.get(a.owner)
            if held is not None:
                if (held.cidr, held.scope) == (a.cidr, a.scope):
                    continue
                raise exceptions.OwnerConflict(owner=a.owner, cidr=held.cidr,
                                               scope=held.scope)
            other = self._overlapping(a.cidr, a.scope, a.ip_version)
            if other is not None:
                raise errors.AllocationConflict(
                    cidr=a.cidr, owner=a.owner, scope=a.scope,
                    other_cidr=other.cidr, other_owner=other.owner)
            new.append(a)
        now = datetime.datetime.now(datetime.timezone.utc)
        for a in new:
            self.allocations[a.owner] = allocation_mod.Allocation(
                a.owner, a.cidr, a.scope, a.ip_version, True, now)
        return new

    def close(self):
        self.closed = True
