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

"""What a driver can do: :class:`Capability`, and the refusal when it cannot.

doc/source/contributor/drivers.rst ("Capabilities") says what each means.
"""

import enum

from murano_cidr import exceptions


class Capability(enum.Enum):
    """Something a driver may be able to do."""

    #: ``allocate`` is idempotent per owner; ``get``, ``list`` answer.
    KEEPS_STATE = "keeps_state"
    #: Every process sees the same allocations.
    SHARES_STATE = "shares_state"
    #: What it hands out does not depend on the asking process living.
    OUTLIVES_PROCESS = "outlives_process"
    #: ``allocate`` holds a reservation that ``confirm`` settles.
    HOLDS_RESERVATIONS = "holds_reservations"
    #: Concurrent callers never get overlapping CIDRs of one scope.
    PREVENTS_COLLISIONS = "prevents_collisions"
    #: ``import_allocations`` records CIDRs that already exist.
    IMPORTS = "imports"
    #: A released CIDR stays out of its scope's pool until its subnet left
    #: the router and a grace period passed.
    HOLDS_RELEASED = "holds_released"


def normalise(require):
    """Return ``require`` as a tuple of capabilities, in the order given.

    :param require: None, a :class:`Capability` or an iterable of them.
    :raises TypeError: for anything that is not a :class:`Capability`.
    """
    if require is None:
        return ()
    if isinstance(require, Capability):
        return (require,)
    result = tuple(require)
    for item in result:
        if not isinstance(item, Capability):
            raise TypeError("expected a Capability, got %r" % (item,))
    return result


_CAP = Capability

#: Why a driver lacks a capability, unless its ``limitations`` say.
DEFAULT_REASONS = {
    _CAP.KEEPS_STATE: "it keeps no state; the subnets Neutron reports are "
    "the only record of what is allocated",
    _CAP.SHARES_STATE: "it keeps no state; set [cidr_allocator] driver to "
    "one that does (db) first",
    _CAP.OUTLIVES_PROCESS: "what it allocates is held by the process that "
    "allocated it, and lost when that process exits",
    _CAP.HOLDS_RESERVATIONS: "it holds no reservations",
    _CAP.PREVENTS_COLLISIONS: "it makes collisions rarer, not impossible",
    _CAP.IMPORTS: "it cannot record allocations made elsewhere",
    _CAP.HOLDS_RELEASED: "it forgets a released CIDR at once; only the "
    "subnets on the router (taken) keep it from being handed out again",
}

#: What a command needing a capability could not do, unless it says.
DEFAULT_ACTIONS = {
    _CAP.KEEPS_STATE: "remember allocations",
    _CAP.SHARES_STATE: "share its allocations between processes",
    _CAP.OUTLIVES_PROCESS: "keep an allocation after this process exits",
    _CAP.HOLDS_RESERVATIONS: "hold reservations",
    _CAP.PREVENTS_COLLISIONS: "prevent collisions",
    _CAP.IMPORTS: "import allocations",
    _CAP.HOLDS_RELEASED: "hold released CIDRs back",
}


def capability_missing(cls, capability, action=None):
    """Word the refusal of what needs a capability the driver class lacks.

    :param action: what was asked; :data:`DEFAULT_ACTIONS`' if None.
    :returns: a :class:`~murano_cidr.exceptions.CapabilityMissing`.
    """
    return exceptions.CapabilityMissing(
        driver=cls.name, capability=capability.value,
        action=action or DEFAULT_ACTIONS[capability],
        reason=cls.limitations.get(capability, DEFAULT_REASONS[capability]))
