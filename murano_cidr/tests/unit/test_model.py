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

"""The spin model's pool and block rule are the code's.

``tools/model/cidr.pml`` names its pool, blocks and candidates in
``@`` lines and gives each candidate's blocks as a bit mask
(``#define SPANn``) and each engine's candidates as a range
(``FIRST(e)``, ``LAST(e)``); the lock driver computes the same from the
pool (:mod:`murano_cidr.engine.pool`) and the block rule
(:func:`murano_cidr.engine.drivers.lock.backend.blocks`).
"""

import os
import re

import netaddr

import murano_cidr
from murano_cidr.engine.drivers.lock import backend
from murano_cidr.engine import pool as pool_mod
from murano_cidr.tests import base

MODEL = os.path.join(os.path.dirname(os.path.abspath(murano_cidr.__file__)),
                     os.pardir, "tools", "model", "cidr.pml")


def read_model(path=MODEL):
    """Return the model's ``@`` declarations and ``#define`` values."""
    with open(path) as f:
        text = f.read()
    decl = {}
    for key, rest in re.findall(r"^\s*\*?\s*@(\w+)\s+(.+?)\s*$", text,
                                re.MULTILINE):
        decl.setdefault(key, []).append(rest.split())
    defines = dict(re.findall(r"^#define\s+(\w+(?:\(\w+\))?)\s+(.+?)\s*$",
                              text, re.MULTILINE))
    return decl, defines


def conditional(expression, value):
    """Evaluate the model's ``((e) == K -> A : B)`` for ``e = value``."""
    match = re.match(r"\(\(\w+\) == (\d+) -> (\d+) : (\d+)\)$", expression)
    key, then, other = (int(g) for g in match.groups())
    return then if value == key else other


class TestModelPool(base.TestCase):

    def setUp(self):
        super().setUp()
        self.decl, self.defines = read_model()
        self.pool_cidr = self.decl["pool"][0][0]
        self.prefixlen = int(self.decl["reservation_prefixlen"][0][0])
        self.blocks = {netaddr.IPNetwork(cidr): int(i)
                       for i, cidr in self.decl["block"]}
        self.cidrs = {int(i): netaddr.IPNetwork(cidr)
                      for i, cidr in self.decl["cidr"]}

    def test_each_candidate_locks_the_blocks_the_code_computes(self):
        self.assertEqual(3, len(self.cidrs))
        for i, net in self.cidrs.items():
            mask = sum(1 << self.blocks[block]
                       for block in backend.blocks(net, self.prefixlen))
            self.assertEqual(mask, int(self.defines["SPAN%d" % i]), net)
        # The model's two sizes share blocks: the /23 and each /24.
        self.assertEqual(self.cidrs[0].prefixlen + 1,
                         self.cidrs[1].prefixlen)

    def test_each_engine_s_candidates_are_the_pool_s(self):
        for e, prefixlen in self.decl["engine"]:
            e, prefixlen = int(e), int(prefixlen)
            pool = pool_mod.Pool.from_cidrs([self.pool_cidr], prefixlen)
            first = conditional(self.defines["FIRST(e)"], e)
            last = conditional(self.defines["LAST(e)"], e)
            self.assertEqual([str(n) for n in pool],
                             [str(self.cidrs[i])
                              for i in range(first, last + 1)], e)

    def test_the_blocks_cut_the_pool(self):
        self.assertEqual(
            sorted(self.blocks),
            list(netaddr.IPNetwork(self.pool_cidr).subnet(self.prefixlen)))
