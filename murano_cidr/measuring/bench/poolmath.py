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

"""Pool math at scale, and the performance target of the pool.

Everything here runs in one process, in memory, with ``taken`` given as
strings, the way Neutron reports subnets:

* the cost of one whole ``allocate`` (``random`` driver) from a pool of
  65,536 candidates with 60,000 taken, against merely parsing those 60,000
  strings with netaddr (target: at most 2x);
* the same from a ``/8`` cut into ``/30`` s (4,194,304 candidates) with
  100,000 taken;
* a whole ``allocate`` from 4,096 candidates with 3,500 taken, against
  Murano's original scan, shown without a target (see the NOTE in
  :func:`run`);
* :class:`netaddr.IPSet` built from the 60,000 taken strings, against
  parsing them;
* each hand-written interval set against its ``netaddr`` equivalent at
  4,096 rows (:mod:`murano_cidr.measuring.bench.intervalsets`): a target
  each, at least :data:`~murano_cidr.measuring.bench.intervalsets.KEEP_RATIO`
  times faster, or the piece gives way to netaddr.

Every target is a ratio of two timings from the same run, so it reads the
same on a slow or a busy machine.
"""

import dataclasses
import random
import typing
import uuid

import netaddr
from oslo_log import log as logging

from murano_cidr.engine import allocator
from murano_cidr.engine import taken as taken_mod
from murano_cidr.measuring.bench import intervalsets
from murano_cidr.measuring.bench import timing
from murano_cidr.operator import confutils
from murano_cidr import opts

LOG = logging.getLogger(__name__)

#: The parse-bound target: allocate / parse at most this.
PARSE_RATIO_LIMIT = 2.0


class MuranoScan(object):
    """Murano's original pick, as its ``NetworkExplorer`` did it.

    The baseline of the speed-up target, kept as it was: the candidate list
    is built once (as Murano did at start-up, so it is not timed); each pick
    parses the taken CIDRs into :class:`netaddr.IPNetwork` (Murano built
    them from Neutron's subnets), starts at ``hash(owner)`` and probes
    linearly, testing each candidate for containment, both ways, against
    every taken network until one contains the other.

    :param parent: the network the candidates are cut from.
    :param prefixlen: the candidates' prefix length.
    """

    def __init__(self, parent, prefixlen):
        self.candidates = list(netaddr.IPNetwork(parent).subnet(prefixlen))

    @staticmethod
    def _overlap(a, b):
        return a in b or b in a

    def pick(self, owner, taken, start=None):
        """Return the CIDR Murano picked for ``owner``, or None if full.

        :param owner: the network id.
        :param taken: CIDR strings on the router.
        :param start: the candidate probed first; by default
            ``hash(owner)``, as Murano's engine did.
        """
        taken_cidrs = [netaddr.IPNetwork(cidr) for cidr in taken]
        if start is None:
            start = hash(owner)
        fails = 0
        while fails < len(self.candidates):
            cidr = self.candidates[(start + fails) % len(self.candidates)]
            if any(self._overlap(cidr, t) for t in taken_cidrs):
                fails += 1
            else:
                return str(cidr)
        return None


@dataclasses.dataclass
class Measure(object):
    """One pool-math measurement."""

    name: str
    candidates: int
    taken: int
    seconds: float
    what: str

    def to_dict(self):
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Target(object):
    """A target of issue 2, as a ratio from one run."""

    name: str
    ratio: float
    limit: float
    at_most: bool
    detail: str

    @property
    def passed(self):
        """Whether the measured ratio meets the target."""
        if self.at_most:
            return self.ratio <= self.limit
        return self.ratio >= self.limit

    def to_dict(self):
        result = dataclasses.asdict(self)
        result["passed"] = self.passed
        return result


def random_driver(pool_cidrs, prefixlen):
    """Build the ``random`` driver on an explicit pool."""
    return allocator.get_allocator(confutils.make_conf({opts.GROUP: {
        "driver": "random", "pool_cidrs": pool_cidrs,
        "subnet_prefixlen": prefixlen}}))


def sample_taken(pool, count, rng, packed=False):
    """Return ``count`` candidates of ``pool`` as strings, in random order.

    :param pool: a :class:`~murano_cidr.engine.pool.Pool`.
    :param count: how many.
    :param rng: a :class:`random.Random`.
    :param packed: take the first ``count`` candidates rather than a
        uniform sample.
    """
    if packed:
        indexes = list(range(count))
    else:
        indexes = rng.sample(range(pool.size), count)
    rng.shuffle(indexes)
    return [pool.cidr(i) for i in indexes]


def _allocate_time(driver, taken, repeat, warm=False):
    """Median time of one whole allocate.

    Cold: no taken string was seen before, so every one is parsed (the
    first deployment on a router). Warm: the same strings were read by an
    earlier allocate, so they come from the parse cache of
    :mod:`murano_cidr.engine.taken` (every later deployment on that router).
    """
    times = []
    for _ in range(max(1, repeat)):
        taken_mod.clear_parse_cache()
        if warm:
            driver.allocate(str(uuid.uuid4()), taken=taken)
        times.append(timing.time_call(
            driver.allocate, str(uuid.uuid4()), taken=taken)[0])
    taken_mod.clear_parse_cache()
    return timing.percentile(times, 0.5)


def _parse_time(taken, repeat):
    return timing.median_time(
        lambda: [netaddr.IPNetwork(cidr) for cidr in taken], repeat)


def run(repeat=3, scan_starts=8, seed=1502437,
        progress: typing.Optional[typing.Callable[[], None]] = None):
    """Run every pool-math measurement and check the parse-bound target.

    :param repeat: timings per measurement; the median is kept.
    :param scan_starts: starts Murano's scan is timed from, evenly spaced
        over the pool; its cost depends on where the start falls, so the
        mean is kept: the expected cost over a uniform ``hash(owner)``,
        the same in every run.
    :param seed: seeds the taken CIDRs chosen.
    :param progress: called after each measurement.
    :returns: ``(measures, targets)``: lists of :class:`Measure` and
        :class:`Target`.
    """
    step = progress or (lambda: None)
    rng = random.Random(seed)
    measures = []
    targets = []

    # 65,536 candidates, 60,000 taken.
    driver = random_driver(["10.0.0.0/8"], 24)
    pool = driver.pool()
    taken = sample_taken(pool, 60000, rng)
    parse = _parse_time(taken, repeat)
    alloc = _allocate_time(driver, taken, repeat)
    ipset = timing.median_time(lambda: netaddr.IPSet(taken), repeat)
    measures += [
        Measure("parse-60k", pool.size, len(taken), parse,
                "netaddr.IPNetwork() of every taken string"),
        Measure("allocate-64k", pool.size, len(taken), alloc,
                "one whole random-driver allocate"),
        Measure("ipset-60k", pool.size, len(taken), ipset,
                "netaddr.IPSet() of the taken strings, nothing picked"),
    ]
    targets.append(Target(
        "allocate 65,536 / 60,000 taken vs parsing 60,000 strings",
        alloc / parse, PARSE_RATIO_LIMIT, True,
        "%.1f ms / %.1f ms" % (alloc * 1e3, parse * 1e3)))
    driver.close()
    step()

    # A /8 cut into /30s: 4,194,304 candidates, 100,000 taken.
    driver = random_driver(["10.0.0.0/8"], 30)
    pool = driver.pool()
    taken = sample_taken(pool, 100000, rng)
    alloc = _allocate_time(driver, taken, repeat)
    parse = _parse_time(taken, repeat)
    measures += [
        Measure("parse-100k", pool.size, len(taken), parse,
                "netaddr.IPNetwork() of every taken string"),
        Measure("allocate-4M", pool.size, len(taken), alloc,
                "one whole random-driver allocate"),
    ]
    driver.close()
    step()

    # 4,096 candidates, 3,500 taken: against Murano's scan, for a uniform
    # layout and for a packed one (the first 3,500 taken), where most
    # starts fall into one long run of taken candidates.
    driver = random_driver(["10.0.0.0/12"], 24)
    pool = driver.pool()
    scan = MuranoScan("10.0.0.0/12", 24)
    starts = [i * pool.size // max(1, scan_starts)
              for i in range(max(1, scan_starts))]
    for layout in ("uniform", "packed"):
        taken = sample_taken(pool, 3500, rng, packed=layout == "packed")
        cold = _allocate_time(driver, taken, repeat)
        warm = _allocate_time(driver, taken, repeat, warm=True)
        scans = [timing.time_call(scan.pick, "owner", taken, start)[0]
                 for start in starts]
        scan_time = sum(scans) / len(scans)
        measures += [
            Measure("allocate-4k-%s-cold" % layout, pool.size, len(taken),
                    cold, "one whole random-driver allocate, every taken "
                    "string parsed"),
            Measure("allocate-4k-%s-warm" % layout, pool.size, len(taken),
                    warm, "the same, taken strings seen before"),
            Measure("murano-scan-4k-%s" % layout, pool.size, len(taken),
                    scan_time, "Murano's hash-and-probe scan, mean of %d "
                    "evenly spaced starts" % len(starts)),
        ]
        # NOTE: no target against Murano's scan (issue 23): on a first
        # read the allocation is bound by parsing the 3,500 strings with
        # netaddr, about a hundredth of the scan, so no pick makes it
        # 1,000 times faster; once the strings were seen before it is
        # bound by sorting and merging their 3,500 intervals, and the
        # ratio, 774 to 2,106 on a quiet machine, moves with the machine
        # more than with the code. The parse-bound target above states
        # what the pick adds; doc/source/benchmarks.rst has the numbers.
        step()
    driver.close()

    for pair in intervalsets.run(repeat=repeat, seed=seed):
        for way, seconds in (("hand", pair.hand), ("netaddr", pair.netaddr)):
            measures.append(Measure(
                "%s-%s" % (pair.name, way), intervalsets.CANDIDATES,
                intervalsets.ROWS, seconds, "%s (%s)" % (pair.what, way)))
        if pair.target:
            targets.append(Target(
                "hand-written %s vs netaddr at 4,096 rows" % pair.name,
                pair.ratio, intervalsets.KEEP_RATIO, False,
                "netaddr %.2f ms / hand-written %.2f ms"
                % (pair.netaddr * 1e3, pair.hand * 1e3)))
    step()
    return measures, targets


#: How many times :func:`run` calls ``progress``.
STEPS = 5
