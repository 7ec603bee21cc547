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

"""What only the operator's commands ask of a driver, and its defaults.

An engine allocates, confirms and releases. The commands and tools also
read the store's clock (``prune``, ``reconcile``), list and free the
released CIDRs a driver holds back (``reconcile``), import CIDRs that
already exist, count what a scope uses of the pool (``usage``) and delete
a scope (the benchmarks). Each is a method of
:class:`~murano_cidr.engine.drivers.base.AllocatorDriver` that calls the
function of the same name, with the driver first, in the module the driver
names in :attr:`~murano_cidr.engine.drivers.base.AllocatorDriver.records`: this
one, unless the driver has ways of its own (``db``:
:mod:`murano_cidr.operator.drivers.db.records`). The module is imported when
one is asked, so an engine never loads it.
"""

import datetime

from murano_cidr.engine import allocation as allocation_mod
from murano_cidr.engine.drivers import capabilities as caps
from murano_cidr.engine import taken as taken_mod


def now(driver):
    """Return the time on the clock of the driver's timestamps.

    :returns: an aware UTC time: the host's here, the database server's
        for ``db``; ``prune`` and ``reconcile`` measure on it.
    """
    return datetime.datetime.now(datetime.timezone.utc)


def live_allocations(driver):
    """Return every live allocation, for ``import`` to compare a file with.

    A driver whose store can be read in pages reads it so, holding one
    page in memory rather than every allocation (``db``); this version
    returns the driver's ``list()``.

    :returns: an iterable of
        :class:`~murano_cidr.engine.allocation.Allocation`, in no particular
        order, read once.
    :raises murano_cidr.exceptions.NotSupported: if the driver keeps no
        state.
    """
    return driver.list()


def list_released(driver, scope=None):
    """Return the released CIDRs the driver still holds back.

    A driver with :attr:`Capability.HOLDS_RELEASED` keeps a released CIDR
    out of its scope's pool until its subnet was seen off the router and
    a grace period passed; others forget it at once and return an empty
    list.

    :param scope: a scope, or None for every scope.
    :returns: a list of :class:`~murano_cidr.engine.allocation.Allocation`
        whose ``owner`` is the former owner and ``released_at`` when it was
        released.
    """
    return []


def free_released(driver, held):
    """Stop holding back a released CIDR: its subnet left the router.

    For ``murano-cidr reconcile``, which saw the router's complete listing
    without it.

    :param held: an :class:`~murano_cidr.engine.allocation.Allocation` from
        :func:`list_released`.
    :returns: True if it was still held (and is now free), False if it was
        freed already or the driver holds nothing back.
    """
    return False


def import_allocations(driver, allocations):
    """Record CIDRs that already exist, all or nothing.

    Used when a live cloud switches to a driver that keeps state, so the
    networks it already has are never handed out again. An allocation
    already recorded identically is skipped (importing is idempotent).

    :param allocations: an iterable of
        :class:`~murano_cidr.engine.allocation.Allocation`.
    :returns: the list of :class:`~murano_cidr.engine.allocation.Allocation`
        newly recorded.
    :raises murano_cidr.operator.errors.AllocationConflict: if one overlaps a
        live allocation of its scope (or another one of the batch);
        nothing is recorded.
    :raises murano_cidr.exceptions.OwnerConflict: if an owner already
        holds another CIDR; nothing is recorded.
    :raises murano_cidr.exceptions.NotSupported: if the driver keeps no
        state.
    """
    driver.require(caps.Capability.IMPORTS, action="import allocations")
    raise NotImplementedError(
        "%s announces Capability.IMPORTS but does not implement "
        "import_allocations" % type(driver).__name__)


def import_stream(driver, source):
    """:func:`import_allocations` of more than memory holds at once.

    :param source: a callable returning an iterable of allocations, called
        again for each attempt of a retried transaction.
    :returns: the number of allocations newly recorded.
    :raises: as :func:`import_allocations`.
    """
    return len(driver.import_allocations(list(source())))


def usage(driver, scope=None, ip_version=4, taken=()):
    """Count what a scope uses of the pool.

    The one usage path: ``murano-cidr usage`` calls it for every scope it
    reports. This version reads the driver's ``list`` and
    ``list_released``; a driver with a faster way (the ``db`` driver
    counts in SQL) has its own.

    :param scope: the scope, or None for allocations without a scope.
    :param ip_version: 4 or 6.
    :param taken: CIDRs in use outside the allocator (from Neutron), as
        ``allocate`` takes them.
    :returns: the dictionary of :func:`counted`.
    :raises murano_cidr.exceptions.InvalidArgument: for a bad scope, IP
        version or ``taken``.
    :raises murano_cidr.exceptions.NotSupported: if the driver keeps no
        state.
    """
    scope = allocation_mod.validate_scope(scope)
    pool = driver.pool(ip_version)
    taken_set = taken_mod.TakenSet.from_taken(taken, pool.version)
    allocations = [a for a in driver.list(scope=scope)
                   if a.scope == scope and a.ip_version == ip_version]
    released = [a for a in driver.list_released(scope=scope)
                if a.scope == scope and a.ip_version == ip_version]
    held = taken_mod.TakenSet.from_taken(
        [a.cidr for a in allocations + released], pool.version)
    return counted(pool, scope, len(allocations), held, taken_set,
                   released=len(released))


def counted(pool, scope, allocations, held, taken_set, released=0):
    """Build what :func:`usage` returns, whichever way it counted.

    :param pool: the :class:`~murano_cidr.engine.pool.Pool`.
    :param scope: the scope.
    :param allocations: how many live allocations the scope holds.
    :param held: a :class:`~murano_cidr.engine.taken.TakenSet` of them, and of
        the released CIDRs still held back.
    :param taken_set: a :class:`~murano_cidr.engine.taken.TakenSet` of the
        CIDRs in use outside the allocator.
    :param released: how many released CIDRs are still held back
        (:func:`list_released`); ``held`` covers them too.
    :returns: a dictionary with ``scope``, ``ip_version``, ``allocations``,
        ``released``, ``pool``, ``prefixlen``, ``size``, ``allocated``
        (candidates ``held`` blocks), ``taken`` (candidates ``taken_set``
        alone blocks), ``free`` and ``used_percent``.
    """
    held_map = pool.free_map(held)
    all_map = pool.free_map(held.union(taken_set))
    return {"scope": scope, "ip_version": pool.version,
            "allocations": allocations, "released": released,
            "pool": str(pool), "prefixlen": pool.prefixlen,
            "size": pool.size, "allocated": held_map.blocked,
            "taken": all_map.blocked - held_map.blocked,
            "free": all_map.free,
            "used_percent": round(100.0 * all_map.blocked / pool.size, 1)}


def release_scope(driver, scope):
    """Release every allocation of a scope (benchmarks, tests, tools).

    This version releases what the driver's ``list`` returns, one by one;
    a driver with a store may do it at once and forget what it keeps
    about the scope itself.

    :param scope: the scope; None for the allocations without one.
    :returns: how many allocations were released.
    :raises murano_cidr.exceptions.NotSupported: if the driver keeps no
        state.
    """
    scope = allocation_mod.validate_scope(scope)
    return sum(1 for a in driver.list(scope=scope)
               if a.scope == scope and driver.release(a.owner))
