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

"""What one allocation costs as the pool fills, in two layouts.

In one process, on a pool of 4,096 ``/24`` s: single allocations timed
when 1 %, 50 % and 90 % of the pool is in use, laid out ``packed`` (the
first candidates, as lowest-first allocation or an import of Neutron's
subnets leaves them) or ``random``. The fill is live allocations of the
scope for drivers that import them (``db``), ``taken`` CIDRs (strings, as
Neutron reports them) for the others. Only ``allocate`` is timed
(``confirm`` and ``release`` follow, untimed), after one untimed
allocation (connections, caches, the ``db`` driver's summary of the
scope), so the cost compares with one baseline operation.

For the ``db`` driver each allocation's rows read (returned by its
queries) and statements sent are counted too, and the baseline (one plain
INSERT and its commit through a bare SQLAlchemy engine) is timed after
each allocation, so that the ratio of the two medians holds however the
load on the machine changes during the run. One more row, ``shared``
(the random layout at 50 %, no target), has a second engine allocate in
the scope before each timed allocation, so that the process's summary of
the scope is never current (:mod:`murano_cidr.drivers.db.search`): what
an allocation costs where several engines take turns.
"""

import contextlib
import dataclasses
import random
import typing
import uuid

from murano_cidr import allocation
from murano_cidr import allocator
from murano_cidr.drivers import capabilities
from murano_cidr.drivers.db import queries
from murano_cidr.measuring.bench import backends as backends_mod
from murano_cidr.measuring.bench import counting
from murano_cidr.measuring.bench import poolmath
from murano_cidr.measuring.bench import timing

Capability = capabilities.Capability

LAYOUTS = ("packed", "random")
FILLS = (0.01, 0.5, 0.9)
#: The layout and fill of the ``shared`` row (db only), and its name.
SHARED = ("random", 0.5)
SHARED_LAYOUT = "shared"

#: The db driver's targets (issue 18), at every fill and layout: the
#: median allocation against one plain INSERT and its commit, and p90
#: against the median.
DB_INSERT_RATIO_LIMIT = 2.0
DB_TAIL_RATIO_LIMIT = 2.0


@dataclasses.dataclass
class FillCost(object):
    """One layout at one fill level: percentiles in seconds, means."""

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
    real_window, real_get = queries.read_window, queries.get

    def read_window(*args, **kwargs):
        result = real_window(*args, **kwargs)
        rows[0] += len(result[0]) + int(result[1])
        return result

    def get(*args, **kwargs):
        row = real_get(*args, **kwargs)
        rows[0] += row is not None
        return row

    # NOTE: held_between reads through read_window: counted once.
    queries.read_window, queries.get = read_window, get
    try:
        yield rows
    finally:
        queries.read_window, queries.get = real_window, real_get


def _sample(driver, scope, taken, samples, counted, baseline, other=None):
    times, rows, statements, floor = [], [], [], []
    engine = driver.database.engine if counted else None
    with contextlib.ExitStack() as stack:
        counter = read = None
        if counted:
            read = stack.enter_context(_counting_rows())
            counter = stack.enter_context(counting.counting(engine))
        # One untimed allocation first: connections, caches, summaries.
        for sample in range(samples + 1):
            owner = str(uuid.uuid4())
            if other is not None:
                # Untimed: another engine's allocation in the scope.
                neighbour = str(uuid.uuid4())
                other.allocate(neighbour, scope=scope, taken=taken)
                other.release(neighbour)
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
            driver.release(owner)
    return times, rows, statements, floor[1:]


def measure(conf, samples, baseline=None, seed=1502437):
    """Time single allocations at each layout and fill level.

    :param conf: the driver's configuration.
    :param samples: allocations timed per level.
    :param baseline: a callable doing the backend's baseline operation,
        timed after each allocation (its median is the level's
        ``baseline``), or None.
    :returns: a list of :class:`FillCost`, layouts then fills, then
        (db) the ``shared`` row.
    """
    rng = random.Random(seed)
    costs = []
    with contextlib.ExitStack() as stack:
        driver = stack.enter_context(
            contextlib.closing(allocator.get_allocator(conf)))
        imports = driver.has(Capability.IMPORTS)
        for layout in LAYOUTS:
            for fill in FILLS:
                costs.append(_measure_case(driver, layout, fill, None,
                                           imports, samples, baseline, rng))
        if imports:
            other = stack.enter_context(
                contextlib.closing(allocator.get_allocator(conf)))
            costs.append(_measure_case(driver, SHARED[0], SHARED[1], other,
                                       imports, samples, baseline, rng))
    return costs


def _measure_case(driver, layout, fill, other, imports, samples, baseline,
                  rng):
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
        driver, scope, taken, samples, imports, baseline, other)
    if imports:
        driver.release_scope(scope)
    return FillCost(
        SHARED_LAYOUT if other is not None else layout,
        "%d%%" % round(fill * 100), len(times),
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
        two per layout and fill level; empty for other drivers or a
        skipped backend.
    """
    if result.driver != "db" or result.skipped:
        return []
    targets = []
    for cost in result.fill_cost:
        if cost["layout"] == SHARED_LAYOUT:
            continue
        where = "%s: %s %s full" % (result.backend, cost["layout"],
                                    cost["fill"])
        floor = cost.get("baseline") or result.baseline
        if floor:
            targets.append(poolmath.Target(
                "%s: p50 allocation vs one INSERT + commit" % where,
                cost["p50"] / floor, DB_INSERT_RATIO_LIMIT, True,
                "%.2f ms / %.2f ms" % (cost["p50"] * 1e3, floor * 1e3)))
        targets.append(poolmath.Target(
            "%s: p90 vs p50" % where, cost["p90"] / cost["p50"],
            DB_TAIL_RATIO_LIMIT, True,
            "%.2f ms / %.2f ms" % (cost["p90"] * 1e3, cost["p50"] * 1e3)))
    return targets
