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
