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

"""Deploy and delete Murano environments; no allocation may leak.

On SQLite, MariaDB and PostgreSQL, for real: the engine as the plugin
changes it (the stand-in of the Train to 2023.2 family) on
the ``db`` driver deploys environments onto two routers of a model Neutron,
and a stand-in of Murano's database records them. They are then deleted in
the three ways a cloud deletes them:

* through the release path of the MuranoPL change: the network's
  ``.destroy`` calls ``release_cidr``, then the stack (subnet and router
  interface) goes;
* without the engine's release (a muted ``.destroy`` failure, a core
  library without the change), cleaned up by ``murano-cidr reconcile`` from the
  ``openstack`` client's listings;
* the same, cleaned up by ``murano-cidr prune --murano-db``.

Before the clean-ups the leaked rows make an empty router's pool look full;
after them no row is left, and the whole pool deploys on each router.
"""

import json
import os
import subprocess
import sys
from unittest import mock

import fixtures
import sqlalchemy as sa
import testscenarios

from murano_cidr.engine.drivers.db import models
from murano_cidr.engine.integration import murano as adapter
from murano_cidr import exceptions
from murano_cidr.tests import base
from murano_cidr.tests import murano_db as murano_tables
from murano_cidr.tests import murano_engines

load_tests = testscenarios.load_tests_apply_scenarios

#: 16 /24 subnets per router.
POOL = "10.40.0.0/20"
POOL_SIZE = 16
ROUTERS = ("router-a", "router-b")
#: Environments deployed per router, and how many of them each way deletes.
PER_ROUTER = 12
BY_RELEASE, BY_RECONCILE, BY_PRUNE = 4, 4, 4


class ModelNeutron(object):
    """Routers, their interfaces and subnets; python-neutronclient's shapes.

    It answers the engine (``list_ports``, ``list_subnets``) and writes the
    listings the ``openstack`` client would print, for ``reconcile``.
    """

    def __init__(self):
        self.subnets = {}   # id -> (router, network name, CIDR)
        self.created = 0

    def plug(self, router, network, cidr):
        """What Heat does: a subnet and its router interface."""
        self.created += 1
        self.subnets["subnet-%d" % self.created] = (router, network, cidr)

    def unplug(self, network):
        """What deleting the stack does."""
        for subnet_id, (_r, name, _c) in list(self.subnets.items()):
            if name == network:
                del self.subnets[subnet_id]

    def on(self, router):
        return [c for r, _n, c in self.subnets.values() if r == router]

    def list_ports(self, retrieve_all=True, device_id=None, **filters):
        return {"ports": [
            {"id": "port-" + s, "device_id": r,
             "fixed_ips": [{"subnet_id": s, "ip_address": "10.0.0.1"}]}
            for s, (r, _n, _c) in self.subnets.items() if r == device_id]}

    def list_subnets(self, retrieve_all=True, **filters):
        return {"subnets": [{"id": s, "cidr": c, "network_id": "net-" + s}
                            for s, (_r, _n, c) in self.subnets.items()]}

    def write_listings(self, directory):
        """Write 'openstack subnet list' and 'port list --router' output."""
        os.makedirs(os.path.join(directory, "ports"), exist_ok=True)
        subnets = os.path.join(directory, "subnets.json")
        with open(subnets, "w") as f:
            json.dump([{"ID": s, "Name": n, "Network": "net-" + s,
                        "Subnet": c}
                       for s, (_r, n, c) in self.subnets.items()], f)
        for router in ROUTERS:
            with open(os.path.join(directory, "ports",
                                   router + ".json"), "w") as f:
                json.dump([{"ID": "port-" + s, "Fixed IP Addresses": [
                    {"subnet_id": s, "ip_address": "10.0.0.1"}]}
                    for s, (r, _n, _c) in self.subnets.items()
                    if r == router], f)
        return subnets, os.path.join(directory, "ports")


class TestMuranoLifecycle(base.TestCase):

    scenarios = [(b, {"backend": b}) for b in ("sqlite", "mysql",
                                               "postgresql")]

    def setUp(self):
        super().setUp()
        self.db = self.use_database(self.backend, self.config_fixture,
                                    sync=True)
        self.murano_db = self.use_database(self.backend)
        with self.murano_db.engine.begin() as connection:
            murano_tables.create(connection)
        # NOTE: no grace period: the model's stacks go at once, so a
        # released CIDR is free once its subnet has left the router.
        self.config(driver="db", pool_cidrs=[POOL], subnet_prefixlen=24,
                    max_environments=POOL_SIZE, release_grace=0)
        self.neutron = ModelNeutron()
        self.deployed = []
        for name in ("nclient", "auth_utils", "helpers"):
            self.useFixture(fixtures.MockPatchObject(
                murano_engines, name, mock.MagicMock()))
        murano_engines.nclient.Client.return_value = self.neutron
        self.conf.register_opts(murano_engines.NETWORKING_OPTS,
                                group="networking")
        self.useFixture(fixtures.MockPatchObject(murano_engines, "CONF",
                                                 self.conf))
        adapter.reset_shared_allocator()
        self.addCleanup(adapter.reset_shared_allocator)
        self.allocator = adapter.shared_allocator(self.conf)
        family = murano_engines.FAMILIES[0]
        self.engine = murano_engines.build_engine(family)(mock.MagicMock())
        self.conf_file = os.path.join(self.state_path, "murano.conf")
        with open(self.conf_file, "w") as f:
            f.write("[cidr_allocator]\ndriver = db\nstate_path = %s\n"
                    "pool_cidrs = %s\nsubnet_prefixlen = 24\n"
                    "max_environments = %d\nrelease_grace = 0\n"
                    "[cidr_allocator_database]\nconnection = %s\n"
                    % (self.state_path, POOL, POOL_SIZE, self.db.url))

    # -- what Murano does ------------------------------------------------

    def deploy(self, router, count):
        """Deploy environments of one network each, as MuranoPL does.

        Each is also recorded in ``self.deployed`` as soon as it is, so a
        deployment failing half-way leaves a record of what it deployed.
        """
        deployed = []
        for _ in range(count):
            env_id, net_id = murano_tables.new_id(), murano_tables.new_id()
            # NeutronNetwork.deploy: getAvailableCidr, the stack push that
            # creates the subnet on the router, then confirmCidr.
            cidr = self.engine.get_available_cidr(router, net_id, 4)
            self.neutron.plug(router, net_id, cidr)
            self.engine.confirm_cidr(net_id)
            with self.murano_db.engine.begin() as connection:
                murano_tables.add_environment(connection, env_id, env_id,
                                              [net_id])
            deployed.append((env_id, net_id))
            self.deployed.append((env_id, net_id))
        return deployed

    def delete(self, environments, release):
        """Delete environments; with ``release``, as ``.destroy`` does."""
        for env_id, net_id in environments:
            if release:
                # NeutronNetwork.destroy, before CloudRegion.destroy.
                self.assertTrue(self.engine.release_cidr(net_id))
            self.neutron.unplug(net_id)   # CloudRegion.destroy
            with self.murano_db.engine.begin() as connection:
                murano_tables.remove_environment(connection, env_id)

    # -- what is left ----------------------------------------------------

    def rows(self, released=False):
        """Count the live allocations, or the released ones held back."""
        table = models.Allocation.__table__
        held = (table.c.released_at.isnot(None) if released
                else table.c.released_at.is_(None))
        with self.db.engine.connect() as connection:
            return connection.execute(sa.select(sa.func.count()).select_from(
                table).where(held)).scalar()

    def cli(self, *args):
        result = subprocess.run(
            [sys.executable, "-m", "murano_cidr.operator.cmd.cli",
             "--config-file", self.conf_file] + list(args),
            capture_output=True, text=True, timeout=300)
        self.assertNotIn("Traceback", result.stderr)
        self.assertEqual(0, result.returncode, result.stderr)
        return result.stdout

    def test_deploy_delete_three_ways_and_nothing_leaks(self):
        by_release, by_reconcile, by_prune = [], [], []
        for router in ROUTERS:
            environments = self.deploy(router, PER_ROUTER)
            self.assertEqual(PER_ROUTER, len(set(self.neutron.on(router))))
            by_release += environments[:BY_RELEASE]
            by_reconcile += environments[BY_RELEASE:BY_RELEASE + BY_RECONCILE]
            by_prune += environments[BY_RELEASE + BY_RECONCILE:]
        self.assertEqual(PER_ROUTER * len(ROUTERS), self.rows())

        # The release path: .destroy releases, then the stack goes.
        self.delete(by_release, release=True)
        # A muted .destroy failure: the stack goes, the row stays.
        self.delete(by_reconcile, release=False)
        # Abandoned (?abandon=true): the engine does not run at all; the
        # stack stays until an operator deletes it.
        with self.murano_db.engine.begin() as connection:
            for env_id, _net_id in by_prune:
                murano_tables.remove_environment(connection, env_id)
        leaked = len(by_reconcile) + len(by_prune)
        self.assertEqual(leaked, self.rows())

        # The leak, as reported: the pool fills up with rows of nothing.
        self.assertRaises(exceptions.PoolExhausted, self.deploy, ROUTERS[0],
                          POOL_SIZE)
        live = [e for e in self.deployed if e not in
                by_release + by_reconcile + by_prune]
        self.assertEqual(POOL_SIZE - (BY_RECONCILE + BY_PRUNE), len(live))

        # reconcile, from the routers: dry run, then --apply. Live networks
        # and abandoned stacks are on their routers: kept. Released CIDRs
        # that no allocation freed yet (the routers not deployed on since)
        # are freed too.
        held = self.rows(released=True)
        listings = self.neutron.write_listings(
            self.useFixture(fixtures.TempDir()).path)
        args = ("--subnets", listings[0], "--ports-dir", listings[1],
                "--grace", "0", "--max-release", "100")
        self.assertIn("would release %d," % (len(by_reconcile) + held),
                      self.cli("reconcile", *args))
        self.assertEqual(leaked + len(live), self.rows())
        self.assertIn("released %d," % (len(by_reconcile) + held),
                      self.cli("reconcile", *args, "--apply"))
        self.assertEqual(len(by_prune) + len(live), self.rows())
        self.assertEqual(0, self.rows(released=True))

        # prune, from Murano's database: the abandoned environments are
        # gone from it, the live ones are not.
        args = ("--murano-db", self.murano_db.url, "--grace", "0",
                "--max-release", "100")
        self.assertIn("would release %d," % len(by_prune),
                      self.cli("prune", *args))
        self.assertIn("released %d," % len(by_prune),
                      self.cli("prune", *args, "--apply"))
        self.assertEqual(len(live), self.rows())

        # The operator deletes the abandoned stacks; the live environments
        # are deleted through the release path.
        for _env_id, net_id in by_prune:
            self.neutron.unplug(net_id)
        self.delete(live, release=True)
        self.assertEqual(0, self.rows())

        for router in ROUTERS:
            self.assertEqual([], self.neutron.on(router))
            # The whole pool deploys on an empty router: nothing is held.
            full = self.deploy(router, POOL_SIZE)
            self.assertEqual(POOL_SIZE, len(set(self.neutron.on(router))))
            self.delete(full, release=True)
        self.assertEqual(0, self.rows())
