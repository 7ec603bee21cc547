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

"""Property-based tests: random geometries and random taken sets."""

import os
import subprocess
import sys

import hypothesis
from hypothesis import strategies as st
import netaddr
import testtools

from murano_cidr.engine import pool
from murano_cidr.engine import taken as taken_mod
from murano_cidr import exceptions
from murano_cidr.tests.unit import murano_reference


@st.composite
def geometries(draw):
    """A small explicit IPv4 pool: one to three disjoint parent networks."""
    prefixlen = draw(st.integers(min_value=20, max_value=28))
    count = draw(st.integers(min_value=1, max_value=3))
    bases = draw(st.lists(st.integers(min_value=0, max_value=63),
                          min_size=count, max_size=count, unique=True))
    parents = []
    for base in bases:
        parent_len = draw(st.integers(min_value=prefixlen - 4,
                                      max_value=prefixlen))
        # Each parent lives in its own /16, so parents never overlap.
        first = netaddr.IPAddress("10.0.0.0").value + base * 2 ** 16
        parents.append(str(netaddr.IPNetwork((first, parent_len))))
    return pool.Pool.from_cidrs(parents, prefixlen)


@st.composite
def taken_sets(draw, a_pool):
    """CIDRs of any size near the pool: inside, around and across it."""
    lowest = min(n.first for n in a_pool.networks)
    highest = max(n.last for n in a_pool.networks)
    items = draw(st.lists(
        st.tuples(st.integers(min_value=max(lowest - 2 ** 12, 0),
                              max_value=highest + 2 ** 12),
                  st.integers(min_value=16, max_value=32)),
        max_size=30))
    result = []
    for address, prefixlen in items:
        result.append(str(netaddr.IPNetwork((address, prefixlen)).cidr))
    return result


def _free_by_scan(a_pool, taken):
    nets = [netaddr.IPNetwork(t) for t in taken]
    return [i for i, c in enumerate(a_pool)
            if not any(c.first <= t.last and t.first <= c.last
                       for t in nets)]


class TestCiProfile(testtools.TestCase):

    def _derandomized(self, **env):
        environ = {k: v for k, v in os.environ.items()
                   if k not in ("CI", "MURANO_CIDR_REQUIRE_SERVICES")}
        environ.update(env)
        code = ("import hypothesis, murano_cidr.tests.unit.test_pool_"
                "properties; print(hypothesis.settings.default.derandomize)")
        return subprocess.run([sys.executable, "-c", code], env=environ,
                              capture_output=True, text=True,
                              check=True).stdout.strip()

    def test_examples_are_derandomized_in_ci(self):
        self.assertEqual("True", self._derandomized(CI="true"))
        self.assertEqual("True", self._derandomized(
            MURANO_CIDR_REQUIRE_SERVICES="1"))


class TestPoolProperties(testtools.TestCase):

    @hypothesis.settings(max_examples=150, deadline=None)
    @hypothesis.given(st.data())
    def test_free_map_matches_a_scan(self, data):
        a_pool = data.draw(geometries())
        taken = data.draw(taken_sets(a_pool))
        free_map = a_pool.free_map(taken_mod.TakenSet.from_taken(taken, 4))
        expected = _free_by_scan(a_pool, taken)
        self.assertEqual(len(expected), free_map.free)
        self.assertEqual(expected,
                         [free_map.nth_free(n) for n in range(free_map.free)])

    @hypothesis.settings(max_examples=150, deadline=None)
    @hypothesis.given(st.data(), st.integers())
    def test_legacy_probe_matches_murano(self, data, id_hash):
        a_pool = data.draw(geometries())
        taken = data.draw(taken_sets(a_pool))
        free_map = a_pool.free_map(taken_mod.TakenSet.from_taken(taken, 4))
        index = free_map.next_free(id_hash % a_pool.size)
        expected = murano_reference.pick(list(a_pool), taken, id_hash)
        self.assertEqual(expected,
                         None if index is None else a_pool.cidr(index))


class TestDriverProperties(testtools.TestCase):
    """A pick never overlaps taken; exhaustion exactly when nothing is free.

    Runs the ``random`` and ``legacy`` drivers' own code paths through
    the base class, with the pool swapped for a random geometry.
    """

    def _drivers(self, a_pool):
        from oslo_config import cfg

        from murano_cidr.engine.drivers import legacy
        from murano_cidr.engine.drivers import random as random_driver

        drivers = []
        for cls in (random_driver.RandomDriver, legacy.LegacyDriver):
            driver = cls(cfg.ConfigOpts())
            driver.pools = {4: a_pool}
            drivers.append(driver)
        return drivers

    @hypothesis.settings(max_examples=100, deadline=None)
    @hypothesis.given(st.data(), st.text(min_size=1, max_size=20,
                                         alphabet="abcdef0123456789-"))
    def test_pick_never_overlaps_taken(self, data, owner):
        a_pool = data.draw(geometries())
        taken = data.draw(taken_sets(a_pool))
        any_free = bool(_free_by_scan(a_pool, taken))
        taken_nets = [netaddr.IPNetwork(t) for t in taken]
        for driver in self._drivers(a_pool):
            if not any_free:
                self.assertRaises(exceptions.PoolExhausted, driver.allocate,
                                  owner, "scope", taken)
                continue
            got = netaddr.IPNetwork(driver.allocate(owner, "scope", taken))
            self.assertTrue(a_pool.contains(got))
            self.assertEqual(a_pool.prefixlen, got.prefixlen)
            for t in taken_nets:
                self.assertFalse(got.first <= t.last and t.first <= got.last,
                                 "%s overlaps taken %s" % (got, t))
