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

"""``murano-cidr-status upgrade check``: is this deployment ready to run?

Run it after changing the configuration or upgrading murano-cidr, before
restarting the services that allocate CIDRs::

    murano-cidr-status --config-file /etc/murano/murano.conf upgrade check

Checks (each says what to do when it does not succeed):

* *Pool geometry*: the ``[cidr_allocator]`` pool options build a valid pool,
  large enough for ``max_environments``.
* *Allocator driver*: the configured driver is installed, loads and accepts
  its options.
* *Store hosts*: a warning when the driver keeps its state where only the
  engines of one host see it (an SQLite database, file locks).
* *Murano engine*: a failure when ``[murano] enabled_plugins`` is set
  where Murano's plugin loaders cannot read it (stevedore 3 and later:
  Victoria on, see the Murano integration guide); where they can
  (Ussuri's stevedore), a warning when the list leaves murano-cidr out;
  and, with no ``[cidr_allocator] driver`` set, that the engine picks its
  CIDRs itself.
* Each installed driver's own checks (its ``upgrade_checks()`` hook: the
  ``db`` driver's *Database*, the ``lock`` driver's *Lock service*), run
  for the configured driver and reported as not used for the others.

With no ``[cidr_allocator] driver`` set in the configuration files given
(as the engine reads them: the plugin's
:func:`~murano_cidr.engine.integration.plugin.driver_set_in`), the engine loads
no driver and picks its CIDRs itself, so the driver, store hosts and
driver checks report that they are not used, rather than test the store
of the commands' default driver (``db``).

Exit codes are oslo.upgradecheck's: ``0`` every check succeeded, ``1`` a
warning (the upgrade may be fine: read it), ``2`` a failure (fix it before
restarting; also for a bad command line or configuration file, or any
murano-cidr error raised outside the checks), ``255`` an unexpected error,
inside the checks' runner or outside it (never ``1``, which would read as a
warning).
"""

import functools
import sys

from oslo_config import cfg
from oslo_log import log as logging
from oslo_upgradecheck import upgradecheck
from stevedore import extension

from murano_cidr.engine import allocator
from murano_cidr.engine.drivers import capabilities
from murano_cidr.engine.integration import plugin
from murano_cidr.engine import pool as pool_mod
from murano_cidr.engine import special_ranges
from murano_cidr import exceptions
from murano_cidr import messages
from murano_cidr.operator.cmd import common
from murano_cidr.operator.drivers import commands as driver_commands
from murano_cidr import opts

LOG = logging.getLogger(__name__)

Capability = capabilities.Capability

PROG = "murano-cidr-status"
DESCRIPTION = (
    "Check that murano-cidr can run with this configuration, before and "
    "after an upgrade: the driver, the pool, the database schema or the "
    "lock service. Exit code 0: ready; 1: warnings; 2: a failure to fix; "
    "255: an unexpected error.")
SUCCESS = upgradecheck.Code.SUCCESS
WARNING = upgradecheck.Code.WARNING
FAILURE = upgradecheck.Code.FAILURE
#: Murano's ``[murano]`` option that the Murano engine check reads.
MURANO_OPTS = [cfg.ListOpt("enabled_plugins",
                           help="Murano's own option: the plugins its "
                           "loaders load (all when unset).")]
#: The namespace of Murano's package-type plugins, the engine plugin's.
PACKAGE_TYPES = "io.murano.plugins.packages"
#: What the checks of a driver say when the engine uses none.
NOT_USED = ("Not used: no [cidr_allocator] driver is set; Murano's engine "
            "picks CIDRs itself.")
#: What :func:`oslo_upgradecheck.upgradecheck.run` returns for an
#: unexpected error, "so it's not confused with the upgrade check exit
#: codes".
EXIT_UNEXPECTED = 255


def _result(code, details):
    return upgradecheck.Result(code, details)


def _guarded(check):
    """Turn an unexpected error of a check into a one-line failure."""

    @functools.wraps(check)
    def wrapper(self):
        try:
            result = check(self)
            details = messages.name_configuration(result.details or "",
                                                  self.conf)
            return _result(result.code, messages.printable(details)
                           if details else result.details)
        except cfg.Error as e:
            return _result(FAILURE, "%s; fix the configuration file"
                           % common.describe_config_error(e, self.conf))
        except Exception as e:  # noqa: B902 - reported, never hidden
            LOG.debug("Check %s failed", getattr(check, "__name__", check),
                      exc_info=True)
            return _result(FAILURE, "%s: %s (run with --debug for the "
                           "traceback)"
                           % (type(e).__name__, messages.clause(e)))
    return wrapper


def _driver_used(check):
    """Report a check of the driver as not used when none is set."""

    @functools.wraps(check)
    def wrapper(self):
        if plugin.driver_set_in(self.conf) is None:
            return _result(SUCCESS, NOT_USED)
        return check(self)
    return wrapper


class Checks(upgradecheck.UpgradeCommands):
    """The checks of ``murano-cidr-status upgrade check``.

    :param conf: the configuration, with murano-cidr's options registered
        and the configuration files read.
    """

    display_title = "murano-cidr upgrade check results"

    def __init__(self, conf, drivers=None):
        super().__init__()
        self.conf = conf
        if drivers is None:
            drivers = driver_commands.driver_classes()
        self.drivers = drivers
        checks = [("Pool geometry", Checks.check_pool),
                  ("Allocator driver", Checks.check_driver),
                  ("Store hosts", Checks.check_store_hosts),
                  ("Murano engine", Checks.check_murano_engine)]
        for name, driver in drivers.items():
            for title, check in driver_commands.of(name).upgrade_checks():
                checks.append((title, _driver_check(name, check)))
        # NOTE: upgradecheck runs the instance's checks; they depend on the
        # installed drivers, so they are built here rather than listed on
        # the class.
        self._upgrade_checks = tuple(checks)

    def run(self, title):
        """Run the check of a title, as ``upgrade check`` does.

        :returns: its :class:`oslo_upgradecheck.upgradecheck.Result`.
        :raises KeyError: if no check has that title.
        """
        return dict(self._upgrade_checks)[title](self)

    @property
    def driver_name(self):
        """The configured ``[cidr_allocator] driver``."""
        return self.conf[opts.GROUP].driver

    @_guarded
    def check_pool(self):
        """The pool builds, holds ``max_environments`` subnets, none public."""
        group = self.conf[opts.GROUP]
        try:
            pools = pool_mod.pools_from_conf(self.conf)
        except exceptions.InvalidConfig as e:
            return _result(FAILURE, "%s. Fix it in the configuration file "
                           "before restarting the services."
                           % messages.clause(e))
        pool = pools[4]
        wanted = group.max_environments
        summary = "; ".join("%s into /%d: %d subnets"
                            % (p, p.prefixlen, p.size)
                            for _v, p in sorted(pools.items()))
        if isinstance(wanted, int) and wanted > pool.size:
            return _result(WARNING, "The IPv4 pool %s into /%d holds %d "
                           "subnets, fewer than max_environments = %d: "
                           "routers with more environments will get 'pool "
                           "exhausted' errors. Widen pool_cidrs, lower "
                           "subnet_prefixlen, or lower max_environments."
                           % (pool, pool.prefixlen, pool.size, wanted))
        public = special_ranges.public_warning(pool)
        if public:
            return _result(WARNING, public)
        return _result(SUCCESS, "%s (max_environments = %s)"
                       % (summary, wanted))

    @_guarded
    @_driver_used
    def check_driver(self):
        """The configured driver is installed and accepts its options."""
        name = self.driver_name
        try:
            driver = allocator.get_allocator(self.conf)
        except (exceptions.DriverNotFound, exceptions.InvalidConfig) as e:
            return _result(FAILURE, "%s." % messages.clause(e))
        except (exceptions.BackendUnavailable,
                exceptions.DatabaseNotSynced) as e:
            # NOTE: the driver loads; its store is the subject of the
            # database and lock service checks, which say what to do.
            return _result(SUCCESS, "Driver %r loads; its store is not "
                           "ready: %s" % (name, messages.clause(e)))
        driver.close()
        if driver.has(Capability.PREVENTS_COLLISIONS):
            guarantee = "prevents collisions"
        else:
            safe = [repr(n) for n, d in self.drivers.items()
                    if d.has(Capability.PREVENTS_COLLISIONS)]
            guarantee = "makes collisions rarer, not impossible"
            if safe:
                guarantee += ("; switching to %s removes them (see the "
                              "operations guide)" % " or ".join(safe))
        return _result(SUCCESS, "Driver %r loads and %s."
                       % (name, guarantee))

    @_guarded
    @_driver_used
    def check_store_hosts(self):
        """The driver's store is one that engines on several hosts share."""
        try:
            driver = allocator.get_allocator(self.conf)
        except exceptions.MuranoCidrException as e:
            # NOTE: reported by the driver check; nothing to add here.
            return _result(SUCCESS, "Not checked: %s." % messages.clause(e))
        try:
            store = driver.single_host_store
        finally:
            driver.close()
        if store is None:
            return _result(SUCCESS, "Nothing limits driver %r to the engines "
                           "of one host." % self.driver_name)
        return _result(WARNING, "Driver %r keeps its state in %s, which "
                       "serves the engines of this host only: engines on "
                       "other hosts could hand out the same CIDRs. If Murano "
                       "engines run on more than this host, set %s to one "
                       "they all reach." % (self.driver_name, store,
                                            driver.shared_store_option))

    @_guarded
    def check_murano_engine(self):
        """Murano's engine loads the plugin, and the plugin picks."""
        try:
            enabled = self.conf.murano.enabled_plugins
        except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
            enabled = None  # NOTE: main() registers it; a caller may not.
        if enabled is not None and _loaders_read_enabled_plugins():
            if plugin.PROJECT not in enabled:
                return _result(WARNING, "[murano] enabled_plugins (%s) does "
                               "not name murano-cidr: Murano's engine does "
                               "not load its plugin and picks its CIDRs "
                               "itself. Add murano-cidr to the list, or "
                               "remove it from [murano]."
                               % ", ".join(enabled))
        elif enabled is not None:
            return _result(FAILURE, "[murano] enabled_plugins is set (%s): "
                           "Murano's plugin loaders need a distribution that "
                           "stevedore does not give, so with murano-cidr "
                           "installed every package load fails on Python 3.8 "
                           "and 3.9, and on 3.10 and later no plugin loads. "
                           "Remove "
                           "enabled_plugins from [murano] and restart "
                           "murano-engine and murano-api."
                           % ", ".join(enabled))
        where = plugin.driver_set_in(self.conf)
        if where is None:
            return _result(SUCCESS, "No [cidr_allocator] driver is set: the "
                           "engine picks its CIDRs itself, as without "
                           "murano-cidr (the MuranoPL change, if made, calls "
                           "nothing).")
        return _result(SUCCESS, "The engine's CIDRs come from driver %r "
                       "(set in %s)." % (self.driver_name, where))


def _loaders_read_enabled_plugins():
    # NOTE: Murano's loaders compare each entry point's dist.project_name
    # with [murano] enabled_plugins. Stevedore before 3 (Ussuri's) reads
    # entry points through pkg_resources, which name their distribution;
    # later ones give none, and the loaders fail on the list.
    manager = extension.ExtensionManager(PACKAGE_TYPES)
    return any(getattr(getattr(e.entry_point, "dist", None), "project_name",
                       None) == plugin.PROJECT for e in manager.extensions)


def _driver_check(name, check):
    """Run a driver's check only when it is the configured driver."""

    @_guarded
    @_driver_used
    def run(checks):
        if checks.driver_name != name:
            return _result(SUCCESS, "Not used by driver %r."
                           % checks.driver_name)
        return check(checks.conf)
    run.__name__ = getattr(check, "__name__", name)
    return run


def exit_code_for(error):
    """Return oslo.upgradecheck's exit code for an error outside the checks.

    :param error: the exception raised before or after the checks ran
        (parsing the command line or the configuration, loading the
        installed drivers).
    :returns: :data:`FAILURE` for an error murano-cidr or oslo.config
        describe (a bad command line or configuration, an unreachable
        store), :data:`EXIT_UNEXPECTED` for anything else.
    """
    if isinstance(error, (exceptions.MuranoCidrException, cfg.Error,
                          OSError)):
        return int(FAILURE)
    return EXIT_UNEXPECTED


def main(argv=None):
    """Entry point of the ``murano-cidr-status`` console script.

    :param argv: the arguments, without the program name; ``sys.argv[1:]``
        if None.
    :returns: the exit code.
    """
    conf = cfg.ConfigOpts()
    common.register_logging(conf)
    driver_commands.set_command_defaults(conf)
    argv = sys.argv[1:] if argv is None else argv

    def _run():
        # NOTE: Murano's own option, read (never set) by the Murano engine
        # check from the murano.conf given; this is the command's own
        # configuration object, not Murano's.
        conf.register_opts(MURANO_OPTS, group="murano")
        upgradecheck.register_cli_options(conf, Checks(conf))
        common.parse(conf, argv, PROG, DESCRIPTION)
        common.setup_logging(conf)
        # NOTE: oslo.upgradecheck has no public way to give
        # UpgradeCommands.check() the configuration it reads --json from,
        # the module's CONF: only main() sets it, and main() parses the
        # command line itself, without --version and the description. So
        # this does what main() does after parsing, and is the one place
        # murano-cidr assigns it.
        upgradecheck.CONF = conf
        return int(upgradecheck.run(conf))

    return common.run(PROG, _run, conf, argv=argv,
                      exit_code=exit_code_for)


if __name__ == "__main__":
    sys.exit(main())
