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

"""The ``db`` driver beside a model of Neutron's allocator, on one database.

On a pool of :data:`POOL` (``10.0.0.0/8`` in 65,536 ``/24`` s, so that
10,000 live allocations leave room), at each number of live allocations of
:data:`SIZES`, the two take turns on the same database, one allocation
each per sample: the ``db`` driver's ``allocate`` (as the main row calls
it: through the driver, after another engine, in a process of its own,
allocated in the same scope) and
:class:`~murano_cidr.measuring.bench.neutron_alloc.NeutronModel`'s (after
one other allocation in its pool). Both hold the same fill, the pool's
first N candidates (the ``db`` driver's as live allocations imported, the
model's as subnet rows); after each sample the allocations made are freed,
untimed, so the fill stays N + 1 throughout. The first sample is not
counted (connections, caches).

Targets (issue 32): the model's median allocation over the driver's, at
least :data:`SPEEDUP_TARGETS` at each size.
"""

import contextlib
import dataclasses
import uuid

from murano_cidr.engine import allocation
from murano_cidr.engine import allocator
from murano_cidr.measuring.bench import backends as backends_mod
from murano_cidr.measuring.bench import fillcost
from murano_cidr.measuring.bench import neighbour as neighbour_mod
from murano_cidr.measuring.bench import neutron_alloc
from murano_cidr.measuring.bench import poolmath
from murano_cidr.measuring.bench import timing
from murano_cidr.operator import confutils
from murano_cidr import opts

#: The pool of this step: 65,536 /24s under 10.0.0.0/8.
POOL = {"env_ip_template": "10.0.0.0", "max_environments": 65536,
        "max_hosts": 250}

#: The numbers of live allocations measured, in order (each fill adds to
#: the one before).
SIZES = (256, 10000)

#: How many times faster than the model the driver must be, by size.
SPEEDUP_TARGETS = {256: 10.0, 10000: 30.0}

#: At most this many samples above :data:`SMALL_FILL` live allocations,
#: where the model reads every row of its pool at each allocation.
LARGE_SAMPLES = 15
SMALL_FILL = 256


@dataclasses.dataclass
class NeutronCost(object):
    """One fill level: medians and p90 of both, in seconds."""

    rows: int
    samples: int
    ours_p50: float
    ours_p90: float
    neutron_p50: float
    neutron_p90: float

    @property
    def speedup(self):
        """The model's median over the driver's."""
        return self.neutron_p50 / self.ours_p50

    def to_dict(self):
        """Return the figures, ``speedup`` included."""
        result = dataclasses.asdict(self)
        result["speedup"] = self.speedup
        return result


def samples_at(rows, samples):
    """Return how many allocations to time with ``rows`` live ones.

    :param rows: the number of live allocations.
    :param samples: the run's ``--samples``.
    """
    if rows <= SMALL_FILL:
        return samples
    return min(samples, LARGE_SAMPLES)


def _turns(driver, neighbour, neutron, scope, prefixlen, samples):
    ours, theirs = [], []
    for sample in range(samples + 1):
        owner = str(uuid.uuid4())
        # Untimed: another engine's turn, in each allocator's own pool.
        owners = [owner, neighbour.allocate(scope)]
        subnets = [neutron.allocate(prefixlen)[0]]
        seconds, _cidr = timing.time_call(driver.allocate, owner,
                                          scope=scope)
        model_seconds, (subnet, _cidr) = timing.time_call(
            neutron.allocate, prefixlen)
        subnets.append(subnet)
        if sample:
            ours.append(seconds)
            theirs.append(model_seconds)
        driver.confirm(owner)
        fillcost.free_owners(driver, scope, owners)
        neutron.release(subnets)
    return ours, theirs


def measure(groups, url, samples, sizes=None):
    """Time both allocators at each fill level, taking turns.

    :param groups: the ``db`` driver's configuration, ``{group: {option:
        value}}``; its pool options are replaced by :data:`POOL`.
    :param url: the driver's database, where the model's tables go too.
    :param samples: the run's ``--samples`` (see :func:`samples_at`).
    :param sizes: the numbers of live allocations, increasing;
        :data:`SIZES` if None.
    :returns: a list of :class:`NeutronCost`, one per size.
    :raises murano_cidr.exceptions.BackendUnavailable: if the other
        engine fails.
    """
    sizes = sizes or SIZES
    groups = {group: dict(values) for group, values in groups.items()}
    groups[opts.GROUP].update(POOL)
    costs = []
    scope = backends_mod.new_scope()
    with contextlib.ExitStack() as stack:
        driver = stack.enter_context(contextlib.closing(
            allocator.get_allocator(confutils.make_conf(groups))))
        pool = driver.pool()
        neutron = stack.enter_context(neutron_alloc.model(url,
                                                          pool.networks))
        neighbour = stack.enter_context(contextlib.closing(
            neighbour_mod.Neighbour(groups)))
        stack.callback(driver.release_scope, scope)
        filled = 0
        for rows in sizes:
            cidrs = [pool.cidr(i) for i in range(filled, rows)]
            driver.import_allocations(
                [allocation.Allocation(owner="%s-fill-%d" % (scope, i),
                                       cidr=cidr, scope=scope)
                 for i, cidr in enumerate(cidrs, filled)])
            neutron.fill(cidrs)
            filled = rows
            ours, theirs = _turns(driver, neighbour, neutron, scope,
                                  pool.prefixlen, samples_at(rows, samples))
            costs.append(NeutronCost(
                rows, len(ours), timing.percentile(ours, 0.5),
                timing.percentile(ours, 0.9),
                timing.percentile(theirs, 0.5),
                timing.percentile(theirs, 0.9)))
    return costs


def targets(result):
    """Return the targets against Neutron for one measured backend.

    :param result: a
        :class:`~murano_cidr.measuring.bench.drivers.DriverResult`.
    :returns: a list of :class:`murano_cidr.measuring.bench.poolmath.Target`,
        one per size measured; empty for a backend without them.
    """
    out = []
    for cost in result.neutron:
        limit = SPEEDUP_TARGETS.get(cost["rows"])
        if limit is None:
            continue
        out.append(poolmath.Target(
            "%s: %s live allocations: Neutron's allocator (model) p50 vs "
            "ours" % (result.backend, "{:,}".format(cost["rows"])),
            cost["speedup"], limit, False,
            "%.2f ms / %.2f ms" % (cost["neutron_p50"] * 1e3,
                                   cost["ours_p50"] * 1e3)))
    return out
