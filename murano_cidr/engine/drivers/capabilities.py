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

"""What a driver can do, announced the way tooz drivers announce theirs.

A driver class lists its :class:`Capability` members in ``capabilities``.
A caller that needs one asks for it when the driver is loaded
(``allocator.get_allocator(conf, require=[...])``) and gets
:class:`~murano_cidr.exceptions.CapabilityMissing` with the driver's own
reason, before the driver is even built, instead of a surprise later.
"""

import enum

from murano_cidr import exceptions


class Capability(enum.Enum):
    """Something a driver may be able to do."""

    #: It remembers what it allocated: :meth:`allocate` is idempotent per
    #: owner, and ``get``, ``list`` and ``usage`` answer.
    KEEPS_STATE = "keeps_state"

    #: Every process sees the same allocations, so a command line (list,
    #: usage, import, prune) acts on what the engines hold.
    SHARES_STATE = "shares_state"

    #: Nothing it hands out depends on the asking process staying alive, so
    #: a short-lived process (a shell) may allocate and confirm for an
    #: engine. True of drivers that hold nothing and of those whose records
    #: outlive the process; false of in-process reservations.
    OUTLIVES_PROCESS = "outlives_process"

    #: :meth:`allocate` holds a reservation that ``confirm`` settles.
    HOLDS_RESERVATIONS = "holds_reservations"

    #: Two concurrent callers are never handed overlapping CIDRs of one
    #: scope.
    PREVENTS_COLLISIONS = "prevents_collisions"

    #: ``import_allocations`` records CIDRs that already exist.
    IMPORTS = "imports"

    #: A released CIDR stays out of the pool of its scope until its subnet
    #: was seen off the router and a grace period passed
    #: (``list_released``, ``free_released``).
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

#: Why a driver lacks a capability, unless it says better itself
#: (``AllocatorDriver.limitations``).
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

#: What a command needing a capability could not do, for the message when
#: the command does not say.
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
    """Word the refusal of what needs a capability a driver lacks.

    :param cls: the driver class.
    :param capability: the :class:`Capability` it lacks.
    :param action: what was asked, e.g. ``"list allocations"``; the
        capability's own description (:data:`DEFAULT_ACTIONS`) if None.
    :returns: a :class:`~murano_cidr.exceptions.CapabilityMissing` giving
        the driver's reason (its ``limitations``), or
        :data:`DEFAULT_REASONS`'.
    """
    return exceptions.CapabilityMissing(
        driver=cls.name, capability=capability.value,
        action=action or DEFAULT_ACTIONS[capability],
        reason=cls.limitations.get(capability, DEFAULT_REASONS[capability]))
