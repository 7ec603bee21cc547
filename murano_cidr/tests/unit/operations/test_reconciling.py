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

"""Releasing allocations whose CIDR is on their router no more."""

import datetime
import json
import os

from murano_cidr import exceptions
from murano_cidr.operator.cmd import cli
from murano_cidr.operator import errors
from murano_cidr.operator.operations import openstack_export
from murano_cidr.operator.operations import pruning
from murano_cidr.operator.operations import reconciling
from murano_cidr.tests import base
from murano_cidr.tests.unit.drivers.db import base as db_base
from murano_cidr.tests.unit.operations import fakes

HOUR = datetime.timedelta(hours=1)
NOW = datetime.datetime(2026, 12, 1, 9, 0, tzinfo=datetime.timezone.utc)
OLD = 48 * HOUR


def listing(**routers):
    result = reconciling.RouterListing()
    for router, cidrs in routers.items():
        result.add(router, cidrs)
    return result


class TestPlan(base.TestCase):

    def plan(self, allocations, routers, grace=24 * HOUR):
        return reconciling.plan(allocations, routers, grace=grace, now=NOW)

    def test_each_case_has_its_code(self):
        routers = listing(r1=["10.0.1.0/24", "10.0.8.0/22"], r2=[])
        routers.add("r3", ["10.0.5.0/24"], missing=["hidden-subnet"])
        allocations = [
            fakes.allocation("on", "10.0.1.0/24", "r1", OLD, NOW),
            fakes.allocation("inside", "10.0.9.0/24", "r1", OLD, NOW),
            fakes.allocation("gone", "10.0.2.0/24", "r1", OLD, NOW),
            fakes.allocation("empty", "10.0.3.0/24", "r2", OLD, NOW),
            fakes.allocation("young", "10.0.4.0/24", "r2", HOUR, NOW),
            fakes.allocation("ageless", "10.0.6.0/24", "r2"),
            fakes.allocation("hidden", "10.0.7.0/24", "r3", OLD, NOW),
            fakes.allocation("unlisted", "10.0.1.0/24", "r4", OLD, NOW),
            fakes.allocation("scopeless", "10.0.1.0/24", None, OLD, NOW),
        ]
        decisions = self.plan(allocations, routers)
        self.assertEqual(
            [(reconciling.ON_ROUTER, pruning.KEEP),
             (reconciling.ON_ROUTER, pruning.KEEP),
             (reconciling.NOT_ON_ROUTER, pruning.RELEASE),
             (reconciling.NOT_ON_ROUTER, pruning.RELEASE),
             (pruning.IN_GRACE, pruning.KEEP),
             (pruning.AGE_UNKNOWN, pruning.KEEP),
             (reconciling.ROUTER_INCOMPLETE, pruning.KEEP),
             (reconciling.ROUTER_NOT_LISTED, pruning.KEEP),
             (reconciling.NO_SCOPE, pruning.KEEP)],
            [(d.code, d.action) for d in decisions])
        self.assertIn("10.0.8.0/22", decisions[1].reason)
        self.assertIn("no subnet overlapping it; allocated 2d ago",
                      decisions[2].reason)
        self.assertIn("hidden-subnet", decisions[6].reason)

    def test_another_router_s_subnet_does_not_keep_it(self):
        decisions = self.plan(
            [fakes.allocation("a", "10.0.1.0/24", "r1", OLD, NOW)],
            listing(r1=["10.0.2.0/24"], r2=["10.0.1.0/24"]))
        self.assertEqual([pruning.RELEASE], [d.action for d in decisions])

    def test_versions_are_compared_apart(self):
        decisions = self.plan(
            [fakes.allocation("a", "10.0.1.0/24", "r1", OLD, NOW),
             fakes.allocation("b", "fd00:1::/64", "r1", OLD, NOW)],
            listing(r1=["fd00:1::/64"]))
        self.assertEqual([pruning.RELEASE, pruning.KEEP],
                         [d.action for d in decisions])

    def test_bad_input(self):
        self.assertRaises(exceptions.InvalidArgument, self.plan, [],
                          listing(), -HOUR)
        self.assertRaises(exceptions.InvalidCidr, self.plan,
                          [fakes.allocation("a", "10.0.1.0/24", "r1", OLD,
                                            NOW)],
                          listing(r1=["not-a-cidr"]))

    def test_apply_releases_what_the_plan_says(self):
        self.config(pool_cidrs=["10.0.0.0/16"], subnet_prefixlen=24)
        driver = fakes.FakeStatefulDriver(self.conf, [
            fakes.allocation("on", "10.0.1.0/24", "r1", OLD),
            fakes.allocation("gone", "10.0.2.0/24", "r1", OLD)])
        decisions = reconciling.plan(driver.list(),
                                     listing(r1=["10.0.1.0/24"]))
        pruning.apply(driver, decisions)
        self.assertEqual(["on"], [a.owner for a in driver.list()])
        self.assertEqual([pruning.KEEP, pruning.RELEASED],
                         [d.action for d in decisions])


class TestRouterListingFromFiles(base.TestCase):

    def write(self, name, data):
        path = os.path.join(self.state_path, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(json.dumps(data))
        return path

    def test_routers_their_cidrs_and_what_is_hidden(self):
        subnets = self.write("subnets.json", [
            {"ID": "s1", "Network": "n1", "Subnet": "10.0.1.0/24"},
            {"ID": "s2", "Network": "n2", "Subnet": "10.0.2.0/24"}])
        self.write("ports/r1.json", [
            {"ID": "p1", "Fixed IP Addresses": [{"subnet_id": "s1"}]},
            {"ID": "p2", "Fixed IP Addresses": "subnet_id='s2'"}])
        self.write("ports/r2.json", [])
        self.write("ports/r3.json", {"ports": [
            {"id": "p3", "fixed_ips": [{"subnet_id": "s1"},
                                       {"subnet_id": "other-project"}]}]})
        result = openstack_export.read_router_listing(
            subnets, os.path.join(self.state_path, "ports"))
        self.assertEqual({"r1": ["10.0.1.0/24", "10.0.2.0/24"], "r2": [],
                          "r3": ["10.0.1.0/24"]}, result.cidrs)
        self.assertEqual(["r3"], list(result.incomplete))
        self.assertIn("other-project", result.incomplete["r3"])

    def test_bad_files_are_input_errors(self):
        subnets = self.write("subnets.json", [])
        self.assertRaises(errors.InvalidInputFile,
                          openstack_export.read_router_listing, subnets,
                          os.path.join(self.state_path, "missing"))
        self.write("ports/r1.json", {"not": "ports"})
        self.assertRaises(errors.InvalidInputFile,
                          openstack_export.read_router_listing, subnets,
                          os.path.join(self.state_path, "ports"))


class TestReleasedCidrs(db_base.DbTestCase):
    """Reconciling frees the released CIDRs the db driver holds back."""

    def setUp(self):
        super().setUp()
        self.driver = self.make_driver(release_grace=10 ** 6)
        self.kept = self.driver.allocate("kept", scope="r1")
        self.gone = self.driver.allocate("gone", scope="r1")
        for owner in ("kept", "gone"):
            self.driver.release(owner)
        self.live = self.driver.allocate("live", scope="r1",
                                         taken=[self.kept, self.gone])

    def reconcile(self, grace, apply=True):
        decisions = reconciling.plan(
            self.driver.list() + self.driver.list_released(),
            listing(r1=[self.kept, self.live]), grace=grace,
            now=pruning.utcnow() + HOUR)
        if apply:
            reconciling.apply(self.driver, decisions)
        return {d.allocation.owner: (d.action, d.code) for d in decisions}

    def test_a_released_cidr_off_its_router_is_freed(self):
        self.assertEqual(
            {"kept": (pruning.KEEP, reconciling.ON_ROUTER),
             "gone": (pruning.RELEASED, reconciling.NOT_ON_ROUTER),
             "live": (pruning.KEEP, reconciling.ON_ROUTER)},
            self.reconcile(grace=HOUR / 2))
        self.assertEqual([self.kept], [a.cidr for a in
                                       self.driver.list_released()])
        self.assertEqual(["live"], [a.owner for a in self.driver.list()])

    def test_the_driver_s_grace_period_is_waited_for_too(self):
        # --grace shorter than [cidr_allocator] release_grace: the longer
        # one counts for a released CIDR; a live one needs --grace only.
        decisions = reconciling.plan(
            self.driver.list() + self.driver.list_released(),
            listing(r1=[self.kept]), grace=HOUR / 2,
            now=pruning.utcnow() + HOUR,
            release_grace=self.driver.release_grace)
        self.assertEqual(
            {"kept": (pruning.KEEP, reconciling.ON_ROUTER),
             "gone": (pruning.KEEP, pruning.IN_GRACE),
             "live": (pruning.RELEASE, reconciling.NOT_ON_ROUTER)},
            {d.allocation.owner: (d.action, d.code) for d in decisions})

    def test_within_the_grace_period_it_is_kept(self):
        self.assertEqual((pruning.KEEP, pruning.IN_GRACE),
                         self.reconcile(grace=2 * HOUR)["gone"])
        self.assertEqual(2, len(self.driver.list_released()))

    def test_freed_since_the_plan_is_skipped(self):
        decisions = reconciling.plan(
            self.driver.list_released(), listing(r1=[]), grace=HOUR / 2,
            now=pruning.utcnow() + HOUR)
        for held in self.driver.list_released():
            self.driver.free_released(held)
        reconciling.apply(self.driver, decisions)
        self.assertEqual([pruning.SKIPPED] * 2,
                         [d.action for d in decisions])

    def test_a_live_allocation_off_its_router_is_not_held_back(self):
        decisions = reconciling.plan(
            self.driver.list(), listing(r1=[]), grace=HOUR / 2,
            now=pruning.utcnow() + HOUR)
        reconciling.apply(self.driver, decisions)
        self.assertEqual([pruning.RELEASED], [d.action for d in decisions])
        self.assertEqual([], self.driver.list())
        self.assertEqual({self.kept, self.gone},
                         {a.cidr for a in self.driver.list_released()})


class TestReconcileCommand(base.TestCase):
    """``murano-cidr reconcile`` with the ``db`` driver's release_grace."""

    def setUp(self):
        super().setUp()
        self.conf_file = self.db_config_file(
            self.use_database("sqlite", sync=True),
            extra="release_grace = 3600\n")
        self.subnets = os.path.join(self.state_path, "subnets.json")
        with open(self.subnets, "w") as f:
            json.dump([], f)
        os.makedirs(os.path.join(self.state_path, "ports"))
        with open(os.path.join(self.state_path, "ports", "r.json"), "w") as f:
            json.dump([], f)

    def cidr(self, *args):
        return self.run_main(cli.main, "--config-file", self.conf_file, *args)

    def test_a_short_grace_does_not_free_a_cidr_within_release_grace(self):
        for owner in ("net-1", "net-2"):
            self.assertEqual(0, self.cidr("allocate", owner, "--scope",
                                          "r")[0])
        self.assertEqual(0, self.cidr("release", "net-1")[0])
        code, out, err = self.cidr(
            "reconcile", "--subnets", self.subnets, "--ports-dir",
            os.path.join(self.state_path, "ports"), "--grace", "0",
            "--max-release", "100", "--apply", "--format", "json")
        self.assertEqual((0, ""), (code, err))
        self.assertEqual({"net-1": ("keep", pruning.IN_GRACE),
                          "net-2": ("released", reconciling.NOT_ON_ROUTER)},
                         {a["owner"]: (a["action"], a["code"])
                          for a in json.loads(out)["allocations"]})
        code, out, err = self.cidr("list")
        self.assertEqual(["net-1 released"],
                         [" ".join(line.split()[0:4:3])
                          for line in out.splitlines()[1:]])
