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

"""The base class of drivers that remember nothing between calls."""

import abc

from oslo_log import log as logging

from murano_cidr.engine import allocation
from murano_cidr.engine.drivers import base
from murano_cidr.engine.drivers import capabilities as caps
from murano_cidr.engine import taken as taken_mod

LOG = logging.getLogger(__name__)


class StatelessDriver(base.AllocatorDriver):
    """Base class of drivers that remember nothing between calls.

    Such a driver decides from the pool and ``taken`` alone: ``release``
    always returns False and ``get``/``list`` raise
    :class:`~murano_cidr.exceptions.NotSupported`, because only Neutron
    knows which subnets exist.
    """

    capabilities = frozenset({caps.Capability.OUTLIVES_PROCESS})

    @abc.abstractmethod
    def pick(self, owner, pool, free_map):
        """Choose one free candidate.

        :param owner: the owner asking, as the caller gave it (a string
            or an integer; already checked by
            :func:`~murano_cidr.engine.allocation.validate_owner`).
        :param pool: the :class:`~murano_cidr.engine.pool.Pool`.
        :param free_map: a :class:`~murano_cidr.engine.freemap.FreeMap` with at
            least one free candidate.
        :returns: the index of a free candidate.
        """

    def allocate(self, owner, scope=None, taken=(), ip_version=4):
        allocation.validate_owner(owner)
        scope = allocation.validate_scope(scope)
        pool = self.pool(ip_version)
        taken_set = taken_mod.TakenSet.from_taken(taken, pool.version)
        free_map = pool.free_map(taken_set)
        if free_map.free == 0:
            raise self.exhausted(pool, scope, free_map)
        cidr = pool.cidr(self.pick(owner, pool, free_map))
        LOG.debug("Picked %s for %s in scope %s (%d of %d free)", cidr,
                  owner, scope, free_map.free, pool.size)
        return cidr

    def release(self, owner):
        allocation.validate_owner(owner)
        return False

    def get(self, owner):
        allocation.validate_owner(owner)
        self.require(caps.Capability.KEEPS_STATE,
                     action="show an allocation")

    def list(self, scope=None):
        allocation.validate_scope(scope)
        self.require(caps.Capability.KEEPS_STATE,
                     action="list allocations")
