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

"""What the ``random`` and ``legacy`` drivers do beyond the contract."""

import random
import secrets
from unittest import mock

from murano_cidr.engine import allocator
from murano_cidr.tests import base
from murano_cidr.tests.unit import murano_reference


class TestRandomDriver(base.TestCase):

    def setUp(self):
        super().setUp()
        self.config(driver="random", max_environments=20)
        self.driver = allocator.get_allocator(self.conf)

    def test_picks_do_not_follow_the_random_module_seed(self):
        # Forked engines share the random module's state; the operating
        # system's source is what keeps their picks apart.
        picks = []
        for _ in range(2):
            random.seed(1502437)
            picks.append([self.driver.allocate("net-%d" % i)
                          for i in range(16)])
        self.assertNotEqual(picks[0], picks[1])

    def test_every_free_candidate_is_reachable_exactly_once(self):
        # The pick maps randrange(free) one-to-one onto the free candidates,
        # so a uniform draw gives a uniform pick.
        taken = ["10.0.0.0/22", "10.0.9.0/24", "10.0.31.0/24"]
        free = 32 - 4 - 1 - 1
        picks = []
        for n in range(free):
            with mock.patch.object(secrets.SystemRandom, "randrange",
                                   return_value=n) as randrange:
                picks.append(self.driver.allocate("net", taken=taken))
            randrange.assert_called_once_with(free)
        self.assertEqual(free, len(set(picks)))
        self.assertFalse(set(picks) & {"10.0.0.0/24", "10.0.1.0/24",
                                       "10.0.2.0/24", "10.0.3.0/24",
                                       "10.0.9.0/24", "10.0.31.0/24"})

    def test_default_pool_has_256_subnets(self):
        self.config(max_environments=250)
        driver = allocator.get_allocator(self.conf)
        self.assertEqual(256, driver.pool(4).size)


class TestLegacyDriver(base.TestCase):

    def setUp(self):
        super().setUp()
        self.config(driver="legacy", max_environments=20)
        self.driver = allocator.get_allocator(self.conf)
        self.available = murano_reference.candidates("10.0.0.0", 20, 250)

    def test_same_pick_as_murano(self):
        taken_sets = [[], ["10.0.0.0/24"], ["10.0.0.0/20"],
                      ["10.0.5.0/24", "10.0.6.0/23", "10.0.30.0/23"],
                      ["10.0.0.0/19"], ["10.0.16.0/20", "10.0.3.7/32"]]
        owners = ["net-%d" % i for i in range(40)] + [
            "5f1c2b7e-8d3a-4e21-9b0c-6a7f8e9d0c1b"]
        for taken in taken_sets:
            for owner in owners:
                expected = murano_reference.pick(self.available, taken,
                                                 hash(owner))
                if expected is None:
                    continue
                self.assertEqual(expected,
                                 self.driver.allocate(owner, taken=taken),
                                 (owner, taken))

    def test_integer_owners_hash_as_integers(self):
        # Murano hashed the id it was given: hash(42) is 42, unsalted,
        # where hash("42") depends on PYTHONHASHSEED.
        owners = list(range(40)) + [-1, 2 ** 70, 144]
        for taken in ([], ["10.0.5.0/24", "10.0.6.0/23"]):
            for owner in owners:
                self.assertEqual(
                    murano_reference.pick(self.available, taken,
                                          hash(owner)),
                    self.driver.allocate(owner, taken=taken),
                    (owner, taken))
        self.assertEqual("10.0.10.0/24", self.driver.allocate(42))

    def test_same_owner_same_start(self):
        self.assertEqual(self.driver.allocate("net-a"),
                         self.driver.allocate("net-a"))

    def test_probe_wraps_around(self):
        owner = next(o for o in ("net-%d" % i for i in range(100))
                     if hash(o) % 32)
        start = hash(owner) % 32
        taken = [str(c) for i, c in enumerate(self.available) if i >= start]
        self.assertEqual("10.0.0.0/24",
                         self.driver.allocate(owner, taken=taken))
