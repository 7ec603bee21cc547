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

"""The model router refuses overlapping subnets, as Neutron does."""

import multiprocessing
import os
import sqlite3

from murano_cidr import exceptions
from murano_cidr.measuring.simulate import router as router_mod
from murano_cidr.tests import base


def _plug(path, router_id, owner, cidr, results):
    router = router_mod.ModelRouter(path)
    try:
        router.add_interface(router_id, owner, cidr)
        results.put((owner, "ok"))
    except router_mod.RouterInterfaceConflict:
        results.put((owner, "refused"))
    finally:
        router.close()


class TestModelRouter(base.TestCase):

    def setUp(self):
        super().setUp()
        self.path = os.path.join(self.state_path, "router.sqlite")
        self.router = router_mod.ModelRouter.create(self.path)
        self.addCleanup(self.router.close)

    def test_create_makes_a_wal_database(self):
        with sqlite3.connect(self.path) as conn:
            self.assertEqual(
                "wal", conn.execute("PRAGMA journal_mode").fetchone()[0])
            self.assertEqual(0, conn.execute(
                "SELECT COUNT(*) FROM router_subnets").fetchone()[0])

    def test_add_and_read(self):
        self.router.add_interface("r1", "net-a", "10.0.0.0/24")
        self.router.add_interface("r1", "net-b", "10.0.1.0/24")
        self.assertEqual(["10.0.0.0/24", "10.0.1.0/24"],
                         self.router.cidrs("r1"))
        self.assertEqual([("net-a", "10.0.0.0/24"), ("net-b", "10.0.1.0/24")],
                         self.router.subnets("r1"))
        self.assertEqual(["10.0.0.0/24", "10.0.1.0/24"],
                         self.router.reader("r1")())

    def test_same_cidr_is_refused(self):
        self.router.add_interface("r1", "net-a", "10.0.0.0/24")
        e = self.assertRaises(router_mod.RouterInterfaceConflict,
                              self.router.add_interface, "r1", "net-b",
                              "10.0.0.0/24")
        self.assertIn("10.0.0.0/24 of network net-b overlaps", str(e))
        self.assertIn("net-a", str(e))
        self.assertEqual(["10.0.0.0/24"], self.router.cidrs("r1"))

    def test_attempts_are_counted_after_the_subnets_are_gone(self):
        self.router.add_interface("r1", "net-a", "10.0.0.0/24")
        self.assertRaises(router_mod.RouterInterfaceConflict,
                          self.router.add_interface, "r1", "net-b",
                          "10.0.0.128/25")
        self.router.remove_interface("net-a")
        self.router.remove_interface("nobody")
        self.router.add_interface("r1", "net-c", "10.0.0.0/24")
        self.router.add_interface("r2", "net-d", "10.0.0.0/24")
        self.assertEqual(["10.0.0.0/24"], self.router.cidrs("r1"))
        self.assertEqual((2, 1), (self.router.added("r1"),
                                  self.router.added("r2")))
        self.assertEqual([("r1", "net-b", "10.0.0.128/25")],
                         self.router.refusals())

    def test_containment_both_ways_is_refused(self):
        self.router.add_interface("r1", "net-a", "10.0.0.0/23")
        self.assertRaises(router_mod.RouterInterfaceConflict,
                          self.router.add_interface, "r1", "net-b",
                          "10.0.1.0/24")
        self.router.add_interface("r2", "net-c", "10.0.1.0/24")
        self.assertRaises(router_mod.RouterInterfaceConflict,
                          self.router.add_interface, "r2", "net-d",
                          "10.0.0.0/16")

    def test_adjacent_and_other_routers_are_accepted(self):
        self.router.add_interface("r1", "net-a", "10.0.0.0/24")
        self.router.add_interface("r1", "net-b", "10.0.1.0/24")
        self.router.add_interface("r2", "net-c", "10.0.0.0/24")
        self.router.add_interface("r1", "net-v6", "fd00::/64")
        self.assertEqual(3, len(self.router.cidrs("r1")))

    def test_bad_cidr(self):
        self.assertRaises(exceptions.InvalidCidr, self.router.add_interface,
                          "r1", "net-a", "10.0.0.300/24")
        self.assertEqual([], self.router.cidrs("r1"))

    def test_seed_and_delete(self):
        self.router.seed("r1", [("old-1", "10.0.0.0/24"),
                                ("old-2", "10.0.5.0/24")])
        self.router.seed("r2", [("old-3", "10.0.0.0/24")])
        self.assertEqual(["10.0.0.0/24", "10.0.5.0/24"],
                         self.router.cidrs("r1"))
        self.router.delete("r1")
        self.assertEqual([], self.router.cidrs("r1"))
        self.assertEqual(["10.0.0.0/24"], self.router.cidrs("r2"))

    def test_processes_racing_for_one_cidr(self):
        # Four processes plug the same CIDR at once: exactly one wins.
        ctx = multiprocessing.get_context("spawn")
        results = ctx.Queue()
        workers = [ctx.Process(target=_plug,
                               args=(self.path, "r1", "net-%d" % i,
                                     "10.0.7.0/24", results))
                   for i in range(4)]
        for w in workers:
            w.start()
        outcomes = [results.get(timeout=60) for _ in workers]
        for w in workers:
            w.join(30)
        self.assertEqual(1, sum(1 for _o, r in outcomes if r == "ok"))
        self.assertEqual(3, sum(1 for _o, r in outcomes if r == "refused"))
        self.assertEqual(["10.0.7.0/24"], self.router.cidrs("r1"))
