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

"""What one allocation costs as the pool fills: the benchmark's main row.

On a pool of 4,096 ``/24`` s, single allocations are timed when 1 %, 50 %
and 90 % of the pool is in use, laid out ``packed`` (the first candidates,
as lowest-first allocation or an import of Neutron's subnets leaves them)
or ``random``, in two ways:

* ``turns`` (the main row, ``db`` only): engines take turns on one
  router, as several Murano engines do in production. Between two timed
  allocations another engine, in a process of its own
  (:mod:`murano_cidr.measuring.bench.neighbour`), allocates in the same
  scope.
* ``alone``: one engine allocates, nobody else.

The fill is live allocations of the scope for drivers that import them
(``db``), ``taken`` CIDRs (strings, as Neutron reports them) for the
others; it stays the same throughout: after each timed allocation
(untimed) both engines' allocations are confirmed, released and, where
the driver holds released CIDRs back, freed. Only ``allocate`` is timed,
after one untimed allocation (connections, caches).

For the ``db`` driver each allocation's rows read (returned by its read
queries) and statements sent are counted too, and the baseline (one plain
INSERT and its commit through a bare SQLAlchemy engine on the same
database) is timed after each allocation, so that the ratio of the two
medians holds however the load on the machine changes during the run.
The targets (:func:`db_targets`), in every cell of both ways: the median
allocation at most :data:`INSERT_RATIO_LIMIT` times the median INSERT,
p90 at most :data:`TAIL_RATIO_LIMIT` times the median.
"""

import contextlib
import dataclasses
import random
import typing
import uuid

from murano_cidr.engine import allocation
from murano_cidr.engine import allocator
from murano_cidr.engine.drivers import capabilities
from murano_cidr.engine.drivers.db import allocating
from murano_cidr.measuring.bench import backends as backends_mod
from murano_cidr.measuring.bench import counting
from murano_cidr.measuring.bench import neighbour as neighbour_mod
from murano_cidr.measuring.bench import poolmath
from murano_cidr.measuring.bench import timing
from murano_cidr.operator import confutils

Capability = capabilities.Capability

LAYOUTS = ("packed", "random")
FILLS = (0.01, 0.5, 0.9)

#: Engines taking turns on the router (the main row), or one alone.
TURNS = "turns"
ALONE = "alone"

#: The db driver's targets (issue 23), in every cell: the median
#: allocation against one plain INSERT and its commit, and p90 against
#: the median.
INSERT_RATIO_LIMIT = 3.0
TAIL_RATIO_LIMIT = 2.0


@dataclasses.dataclass
class FillCost(object):
    """One way, layout and fill level: percentiles in seconds, means."""

    engines: str
    layout: str
    fill: str
    samples: int
    p50: float
    p90: float
    p99: float
    rows: typing.Optional[float] = None
    statements: typing.Optional[float] = None
    baseline: typing.Optional[float] = None
    baseline_p90: typing.Optional[float] = None


def used_indices(layout, size, count, rng):
    """Return the candidates in use: the first ``count``, or at random."""
    if layout == "packed":
        return list(range(count))
    return rng.sample(range(size), count)


@contextlib.contextmanager
def _counting_rows():
    """Count the rows the db driver's read queries return."""
    rows = [0]
    real_window, real_get = allocating.read_window, allocating.get

    def read_window(*args, **kwargs):
        result = real_window(*args, **kwargs)
        rows[0] += len(result[0]) + int(result[1])
        return result

    def get(*args, **kwargs):
        row = real_get(*args, **kwargs)
        rows[0] += row is not None
        return row

    allocating.read_window, allocating.get = read_window, get
    try:
        yield rows
    finally:
        allocating.read_window, allocating.get = real_window, real_get


def free_owners(driver, scope, owners):
    """Release ``owners`` and free what the driver holds back of them.

    :param driver: the allocator.
    :param scope: the scope they were allocated in.
    :param owners: the owners to release.
    """
    for owner in owners:
        driver.release(owner)
    if driver.has(Capability.HOLDS_RELEASED):
        for held in driver.list_released(scope):
            if held.owner in owners:
                driver.free_released(held)


def _sample(driver, scope, taken, samples, counted, baseline,
            neighbour=None):
    times, rows, statements, floor = [], [], [], []
    engine = driver.database.engine if counted else None
    with contextlib.ExitStack() as stack:
        counter = read = None
        if counted:
            read = stack.enter_context(_counting_rows())
            counter = stack.enter_context(counting.counting(engine))
        # One untimed allocation first: connections, caches.
        for sample in range(samples + 1):
            owner = str(uuid.uuid4())
            owners = [owner]
            if neighbour is not None:
                # Untimed: the other engine's turn on the router.
                owners.append(neighbour.allocate(scope))
            if counted:
                read[0] = 0
                counter.reset()
            seconds, _cidr = timing.time_call(
                driver.allocate, owner, scope=scope, taken=taken)
            if baseline is not None:
                # Interleaved, so both see the same load on the machine.
                floor.append(timing.time_call(baseline)[0])
            if sample:
                times.append(seconds)
                if counted:
                    rows.append(read[0])
                    statements.append(len([s for s in counter.statements
                                           if s != "BEGIN"]))
            driver.confirm(owner)
            free_owners(driver, scope, owners)
    return times, rows, statements, floor[1:]


def measure(groups, samples, baseline=None, seed=1502437):
    """Time single allocations in each way, layout and fill level.

    :param groups: the driver's configuration, ``{group: {option:
        value}}`` (the other engine builds its driver from it).
    :param samples: allocations timed per cell.
    :param baseline: a callable doing the backend's baseline operation,
        timed after each allocation (its median is the cell's
        ``baseline``), or None.
    :returns: a list of :class:`FillCost`: for drivers that import (db)
        the ``turns`` cells first, then the ``alone`` ones; layouts, then
        fills.
    :raises murano_cidr.exceptions.BackendUnavailable: if the other
        engine fails.
    """
    rng = random.Random(seed)
    costs = []
    with contextlib.ExitStack() as stack:
        driver = stack.enter_context(contextlib.closing(
            allocator.get_allocator(confutils.make_conf(groups))))
        imports = driver.has(Capability.IMPORTS)
        ways = [ALONE]
        if imports:
            ways.insert(0, TURNS)
        for way in ways:
            neighbour = None
            if way == TURNS:
                neighbour = stack.enter_context(contextlib.closing(
                    neighbour_mod.Neighbour(groups)))
            for layout in LAYOUTS:
                for fill in FILLS:
                    costs.append(_measure_case(
                        driver, way, layout, fill, neighbour, imports,
                        samples, baseline, rng))
    return costs


def _measure_case(driver, way, layout, fill, neighbour, imports, samples,
                  baseline, rng):
    pool = driver.pool()
    used = used_indices(layout, pool.size, round(fill * pool.size), rng)
    scope = backends_mod.new_scope()
    taken = [pool.cidr(i) for i in used]
    if imports:
        # The fill is the driver's own allocations, as in a cloud that has
        # used it for a while.
        driver.import_allocations(
            [allocation.Allocation(owner="%s-fill-%d" % (scope, i),
                                   cidr=cidr, scope=scope)
             for i, cidr in enumerate(taken)])
        taken = []
    times, rows, statements, floor = _sample(
        driver, scope, taken, samples, imports, baseline, neighbour)
    if imports:
        driver.release_scope(scope)
    return FillCost(
        way, layout, "%d%%" % round(fill * 100), len(times),
        timing.percentile(times, 0.5), timing.percentile(times, 0.9),
        timing.percentile(times, 0.99),
        sum(rows) / len(rows) if rows else None,
        sum(statements) / len(statements) if statements else None,
        timing.percentile(floor, 0.5) if floor else None,
        timing.percentile(floor, 0.9) if floor else None)


def db_targets(result):
    """Return the db driver's targets for one measured backend.

    :param result: a
        :class:`~murano_cidr.measuring.bench.drivers.DriverResult`.
    :returns: a list of :class:`murano_cidr.measuring.bench.poolmath.Target`,
        two per cell (way, layout and fill level); empty for other drivers
        or a skipped backend.
    """
    if result.driver != "db" or result.skipped:
        return []
    targets = []
    for cost in result.fill_cost:
        where = "%s: %s, %s %s full" % (
            result.backend, cost.get("engines", ALONE), cost["layout"],
            cost["fill"])
        floor = cost.get("baseline") or result.baseline
        if floor:
            targets.append(poolmath.Target(
                "%s: p50 allocation vs one INSERT + commit" % where,
                cost["p50"] / floor, INSERT_RATIO_LIMIT, True,
                "%.2f ms / %.2f ms" % (cost["p50"] * 1e3, floor * 1e3)))
        targets.append(poolmath.Target(
            "%s: p90 vs p50" % where, cost["p90"] / cost["p50"],
            TAIL_RATIO_LIMIT, True,
            "%.2f ms / %.2f ms" % (cost["p90"] * 1e3, cost["p50"] * 1e3)))
    return targets
