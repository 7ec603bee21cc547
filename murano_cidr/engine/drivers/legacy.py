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

"""The ``legacy`` driver: Murano's original pick, kept as the baseline.

Murano's ``NetworkExplorer.get_available_cidr`` started at
``hash(net_id) % len(pool)`` and probed linearly to the first candidate that
overlaps no CIDR on the router. ``net_id`` was hashed as the engine passed
it: an integer id as the integer (``hash(42)`` is 42), a string as the
string, so this driver hashes the owner it is given before it becomes the
decimal string the other drivers keep. This driver returns the same CIDR for
the same pool, owner and taken CIDRs, found by bisection rather than by
probing, and raises :class:`~murano_cidr.exceptions.PoolExhausted` where
Murano returned None.
"""

from murano_cidr.engine.drivers import stateless


class LegacyDriver(stateless.StatelessDriver):
    """Hash of the owner, then the next free candidate.

    Usage considerations: Python's ``hash()`` of a string is salted per
    process (``PYTHONHASHSEED``), exactly as it was in Murano's engine, so
    two engine processes start from unrelated places (an integer owner is
    not salted: ``hash(42)`` is 42 in every process); within a process the
    same owner always starts at the same place. Concurrent deployments
    collide about as often as the birthday bound over the pool predicts,
    and more once the router carries networks, because every start that
    falls into a run of taken candidates lands on the same next free one.
    """

    name = "legacy"

    def pick(self, owner, pool, free_map):
        return free_map.next_free(hash(owner) % pool.size)
