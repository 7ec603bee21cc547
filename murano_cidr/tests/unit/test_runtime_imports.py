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

"""A Murano engine carries only what its driver runs, and is left as it was.

Each check runs in a fresh interpreter, so what other tests imported does
not count. :data:`ENGINE` is an engine of Murano's Xena to 2023.2 family
(the stand-in of :mod:`murano_cidr.tests.murano_engines`) configured with
one driver: Murano's package-type loader loads the plugin, then one network
is allocated, confirmed and released. It reports the modules of murano-cidr
it imported, with their lines, and the process-wide state of other
libraries that loading murano-cidr changed.
"""

import json
import os
import subprocess
import sys
import textwrap

import fixtures
import testscenarios

from murano_cidr.tests import base

load_tests = testscenarios.load_tests_apply_scenarios

E = "murano_cidr.engine."

#: What every engine imports, whatever its driver: the shared modules, the
#: core, the integration and the drivers' base.
CORE = frozenset({
    "murano_cidr", "murano_cidr._i18n", "murano_cidr.exceptions",
    "murano_cidr.opts", "murano_cidr.engine"} | {E + name for name in (
        "allocation", "allocator", "freemap", "pool", "pool_cidrs",
        "special_ranges", "taken", "drivers", "drivers.base",
        "drivers.capabilities", "integration", "integration.murano",
        "integration.plugin")})

#: Each driver's runtime modules, besides :data:`CORE` (``lock`` on file
#: locks: a lock service's module loads when a coordination_url names it;
#: ``db`` on SQLite: a database on a server loads its own dialect module in
#: place of ``sqlite``: tests/functional/db/test_engine_imports.py).
#: Their lines, on every path: murano_cidr/tests/engine_paths.py.
DRIVER_MODULES = {
    "db": frozenset({"murano_cidr.messages"} | {
        E + "drivers.db" + name for name in (
            "", ".allocating", ".api", ".compat", ".connection", ".driver",
            ".errors", ".hints", ".models", ".options", ".sqlite")}),
    "lock": frozenset(E + "drivers.lock" + name for name in (
        "", ".backend", ".driver", ".file_service", ".options",
        ".picking")),
    "random": frozenset({E + "drivers.random", E + "drivers.stateless"}),
    "legacy": frozenset({E + "drivers.legacy", E + "drivers.stateless"}),
}

#: What the global CONF may gain: the ``[cidr_allocator*]`` groups are
#: murano-cidr's; ``[networking]``, ``[murano]`` and the command line's
#: options are the engine's, registered by the stand-in (which registers
#: ``[database]`` through oslo.db, as Murano does, before murano-cidr
#: loads).
OWN_GROUPS = ("cidr_allocator", "cidr_allocator_database", "networking",
              "murano", "config_file", "config_dir")

#: The engine, up to its first pick. Before murano-cidr is imported it
#: imports the libraries a Murano engine has (their own import-time
#: registrations, such as alembic's null log handler, are theirs), sets up
#: its own oslo.db, records the state to compare, and finds
#: oslo.concurrency's process-wide semaphores by asking lockutils for one.
ENGINE_SETUP = """
import json, logging, os, sys, warnings
from unittest import mock

import alembic.config, hypothesis, netaddr, oslo_db.api, oslo_log.log
import sqlalchemy, stevedore
from oslo_concurrency import lockutils
from oslo_config import cfg
from oslo_db import options as db_options

# The engine's own oslo.db: its [database], and its SQL logging turned on
# ([database] connection_debug = 50).
db_options.set_defaults(cfg.CONF)
logging.getLogger("sqlalchemy.engine").setLevel(logging.INFO)

driver, state, own, connection = (sys.argv[1], sys.argv[2],
                                  json.loads(sys.argv[3]), sys.argv[4])
# More configuration, in the file's own words, for a test's paths.
extra = sys.argv[5] if len(sys.argv) > 5 else ""
asked = []
get = lockutils.Semaphores.get


def recording_get(semaphores, name):
    asked.append((semaphores, name))
    return get(semaphores, name)


mock.patch.object(lockutils.Semaphores, "get", recording_get).start()
with lockutils.internal_lock("host"):
    process_wide = asked[-1][0]


def logging_state():
    loggers = {"": logging.getLogger()}
    loggers.update((name, logger) for name, logger in
                   logging.root.manager.loggerDict.items()
                   if isinstance(logger, logging.Logger))
    return {name: [logging.getLevelName(logger.level),
                   [repr(h) for h in logger.handlers],
                   logger.propagate, logger.disabled]
            for name, logger in loggers.items()
            if not name.startswith("murano_cidr")}


def conf_state():
    return {key: sorted(cfg.CONF[key]) if isinstance(
        cfg.CONF[key], cfg.ConfigOpts.GroupAttr) else "option"
            for key in cfg.CONF}


before = (logging_state(), conf_state(), repr(warnings.filters),
          logging.root.manager.disable)

from murano_cidr.tests import murano_engines


class Neutron(object):
    subnets = ["10.0.0.0/24"]

    def list_ports(self, retrieve_all=True, **filters):
        return {"ports": [{"device_id": "router", "fixed_ips": [
            {"subnet_id": "s%d" % i, "ip_address": cidr.split("/")[0]}
            for i, cidr in enumerate(self.subnets)]}]}

    def list_subnets(self, retrieve_all=True, **filters):
        return {"subnets": [{"id": "s%d" % i, "cidr": cidr}
                            for i, cidr in enumerate(self.subnets)]}


cfg.CONF.register_opts(murano_engines.NETWORKING_OPTS, group="networking")
cfg.CONF.register_opts(murano_engines.MURANO_OPTS, group="murano")
path = os.path.join(state, "murano.conf")
with open(path, "w") as f:
    f.write("[cidr_allocator]\\ndriver = %s\\nstate_path = %s\\n"
            "[cidr_allocator_database]\\nconnection = %s\\n%s"
            % (driver, state, connection, extra))
cfg.CONF(args=[], project="murano", default_config_files=[path],
         default_config_dirs=[])
for name in ("nclient", "auth_utils", "helpers"):
    setattr(murano_engines, name, mock.MagicMock())
murano_engines.nclient.Client.return_value = Neutron()
explorer = murano_engines.build_stock_engine(murano_engines.FAMILIES[0])
sys.modules["murano.engine.system.net_explorer"] = mock.NonCallableMock(
    NetworkExplorer=explorer)
loaded, failed = murano_engines.load_package_type_plugins(cfg.CONF)
assert loaded and not failed, (loaded, failed)
"""

#: One network allocated, confirmed and released; the report.
ENGINE = ENGINE_SETUP + """
engine = explorer(mock.MagicMock(), "region")
cidr = engine.get_available_cidr("router", "net")
engine.confirm_cidr("net")
engine.release_cidr("net")

after = (logging_state(), conf_state(), repr(warnings.filters),
         logging.root.manager.disable)
modules = {}
for name, module in sorted(sys.modules.items()):
    if name.startswith("murano_cidr") and not name.startswith(
            "murano_cidr.tests"):
        with open(module.__file__) as f:
            modules[name] = len(f.readlines())
print(json.dumps({
    "cidr": cidr, "modules": modules,
    "semaphores": sorted(name for semaphores, name in asked
                         if semaphores is process_wide and name != "host"),
    "logging": [[name, before[0].get(name), state]
                for name, state in sorted(after[0].items())
                if before[0].get(name, ["NOTSET", [], True, False])
                != state],
    "conf": {key: [before[1].get(key), value]
             for key, value in sorted(after[1].items())
             if key not in own and before[1].get(key) != value},
    "warnings": before[2] == after[2],
    "disable": [before[3], after[3]],
}))
"""


def sync_database(state, connection):
    """Run ``murano-cidr-manage db sync`` on ``connection``.

    :param state: a directory for its configuration file.
    """
    conf = os.path.join(state, "manage.conf")
    with open(conf, "w") as f:
        f.write("[cidr_allocator]\nstate_path = %s\n"
                "[cidr_allocator_database]\nconnection = %s\n"
                % (state, connection))
    subprocess.run([sys.executable, "-m", "murano_cidr.operator.cmd.manage",
                    "--config-file", conf, "db", "sync"], check=True,
                   capture_output=True)


def engine_report(driver, state, connection=None):
    """Run :data:`ENGINE` with ``driver``, its state in ``state``.

    The ``db`` driver's database is synced first by
    ``murano-cidr-manage db sync``, in a process of its own.

    :param connection: the ``db`` driver's database URL; an SQLite file in
        ``state`` by default.
    :returns: the engine's :class:`subprocess.CompletedProcess`.
    """
    connection = connection or "sqlite:///%s/c.db" % state
    if driver == "db":
        sync_database(state, connection)
    return subprocess.run([sys.executable, "-c", ENGINE, driver, state,
                           json.dumps(OWN_GROUPS), connection],
                          capture_output=True, text=True)


def run_engine(test, driver, connection=None):
    """Run :data:`ENGINE` with ``driver``; return its report.

    :param connection: as for :func:`engine_report`.
    """
    done = engine_report(driver, test.useFixture(fixtures.TempDir()).path,
                         connection)
    test.assertEqual(0, done.returncode, done.stderr)
    return json.loads(done.stdout.splitlines()[-1])


def inside(module, names):
    """Tell whether ``module`` is, or is inside, one of ``names``."""
    return any(module == n or module.startswith(n + ".") for n in names)


DRIVERS = [(name, {"driver": name}) for name in sorted(DRIVER_MODULES)]


class TestEngineImports(base.TestCase):

    scenarios = DRIVERS

    def test_only_the_driver_s_runtime_modules(self):
        report = run_engine(self, self.driver)
        modules = report["modules"]
        self.assertEqual(sorted(CORE | DRIVER_MODULES[self.driver]),
                         sorted(modules))


class TestHostState(base.TestCase):
    """Loading murano-cidr leaves other libraries' process state alone."""

    scenarios = [(name, {"driver": name}) for name in ("db", "lock")]

    def test_nothing_of_another_library_changes(self):
        report = run_engine(self, self.driver)
        # No logger configured, no level set (the engine's SQL logging
        # stays on), no handler added.
        self.assertEqual([], report["logging"])
        self.assertEqual([0, 0], report["disable"])
        # No group or option of the global CONF that is not murano-cidr's
        # (or the engine's own).
        self.assertEqual({}, report["conf"])
        self.assertTrue(report["warnings"])


class TestSemaphores(base.TestCase):
    """oslo.concurrency's semaphores are the host's: drivers keep theirs."""

    scenarios = [(name, {"driver": name}) for name in ("db", "lock")]

    def test_no_process_wide_semaphore(self):
        self.assertEqual([], run_engine(self, self.driver)["semaphores"])


class TestTools(base.TestCase):

    def test_console_scripts_import_no_tool_library(self):
        # The commands' parsers know simulate and bench, but tqdm and
        # matplotlib load only when a run draws a bar or a plot.
        script = textwrap.dedent("""
            import json, sys
            from murano_cidr.operator.cmd import cli
            from murano_cidr.operator.cmd import manage
            from murano_cidr.operator.cmd import status
            print(json.dumps(sorted(sys.modules)))
        """)
        out = subprocess.run([sys.executable, "-c", script], check=True,
                             capture_output=True, text=True).stdout
        modules = json.loads(out.splitlines()[-1])
        self.assertEqual([], [m for m in modules
                              if inside(m, ("tqdm", "matplotlib"))])


def main():
    """Print what each driver's engine imports of murano-cidr.

    ``python -m murano_cidr.tests.unit.test_runtime_imports``: the lines
    and modules, as the tests count them.
    """
    for driver in sorted(DRIVER_MODULES):
        with fixtures.TempDir() as state:
            done = engine_report(driver, state.path)
        if done.returncode:
            sys.exit(done.stderr)
        modules = json.loads(done.stdout.splitlines()[-1])["modules"]
        print("%-6s %5d lines in %2d modules" % (
            driver, sum(modules.values()), len(modules)))


if __name__ == "__main__":
    main()
