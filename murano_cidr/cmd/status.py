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
* *Database*: for the ``db`` driver, the allocation tables exist and are at
  the revision this code expects.
* *Lock service*: for the ``lock`` driver, the coordination backend answers,
  or the file lock directory is writable.

Exit codes are oslo.upgradecheck's: ``0`` every check succeeded, ``1`` a
warning (the upgrade may be fine: read it), ``2`` a failure (fix it before
restarting; also for a bad command line or configuration file), ``255`` an
unexpected error.
"""

import functools
import os
import socket
import sys
import tempfile
import urllib.parse

from oslo_config import cfg
from oslo_log import log as logging
from oslo_upgradecheck import upgradecheck
import tooz
from tooz import coordination

from murano_cidr import allocator
from murano_cidr.cmd import common
from murano_cidr.drivers.db import api
from murano_cidr.drivers.db import migration
from murano_cidr.drivers.lock import driver as lock_driver
from murano_cidr.drivers.lock import tooz_backend
from murano_cidr import exceptions
from murano_cidr import opts
from murano_cidr import pool as pool_mod
from murano_cidr import special_ranges

LOG = logging.getLogger(__name__)

PROG = "murano-cidr-status"
DESCRIPTION = (
    "Check that murano-cidr can run with this configuration, before and "
    "after an upgrade: the driver, the pool, the database schema or the "
    "lock service. Exit code 0: ready; 1: warnings; 2: a failure to fix.")
SUCCESS = upgradecheck.Code.SUCCESS
WARNING = upgradecheck.Code.WARNING
FAILURE = upgradecheck.Code.FAILURE


def _result(code, details):
    return upgradecheck.Result(code, details)


def _clause(error):
    """An error's message on one line, to be followed by more text."""
    return common.one_line(error).rstrip(".")


def _guarded(check):
    """Turn an unexpected error of a check into a one-line failure."""

    @functools.wraps(check)
    def wrapper(self):
        try:
            return check(self)
        except cfg.Error as e:
            return _result(FAILURE, "%s; fix the configuration file"
                           % common.describe_config_error(e, self.conf))
        except Exception as e:  # noqa: B902 - reported, never hidden
            LOG.debug("Check %s failed", check.__name__, exc_info=True)
            return _result(FAILURE, "%s: %s (run with --debug for the "
                           "traceback)" % (type(e).__name__, _clause(e)))
    return wrapper


def _tcp_probe(url, timeout=5):
    """Return None if the URL's host and port accept a connection.

    tooz clients retry a refused connection for a minute or more; an
    operator running a check wants the answer at once. URLs without an
    explicit host and port (``file://``) are not probed.

    :returns: None, or why the connection failed.
    """
    try:
        parts = urllib.parse.urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError as e:
        return "bad URL: %s" % e
    if not host or not port:
        return None
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as e:
        return "cannot connect to %s:%d: %s" % (host, port,
                                                e.strerror or e)
    return None


def _writable_dir(path):
    """Return None if files can be created under ``path``, else why not."""
    if os.path.isdir(path):
        try:
            with tempfile.TemporaryFile(dir=path):
                pass
        except OSError as e:
            return "cannot create a file in %s: %s" % (path, e.strerror or e)
        return None
    if os.path.exists(path):
        return "%s exists and is not a directory" % path
    parent = os.path.dirname(path.rstrip(os.sep)) or os.sep
    if parent == path:
        return "%s does not exist" % path
    reason = _writable_dir(parent)
    if reason is not None:
        return "%s does not exist and %s" % (path, reason)
    return None


class Checks(upgradecheck.UpgradeCommands):
    """The checks of ``murano-cidr-status upgrade check``.

    :param conf: the configuration, with murano-cidr's options registered
        and the configuration files read.
    """

    display_title = "murano-cidr upgrade check results"

    def __init__(self, conf):
        super().__init__()
        self.conf = conf

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
                           "before restarting the services." % _clause(e))
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
    def check_driver(self):
        """The configured driver is installed and accepts its options."""
        name = self.driver_name
        try:
            driver = allocator.get_allocator(self.conf)
        except (exceptions.DriverNotFound, exceptions.InvalidConfig) as e:
            return _result(FAILURE, "%s." % _clause(e))
        except (exceptions.BackendUnavailable,
                exceptions.DatabaseNotSynced) as e:
            # NOTE: the driver loads; its store is the subject of the
            # database and lock service checks, which say what to do.
            return _result(SUCCESS, "Driver %r loads; its store is not "
                           "ready: %s" % (name, _clause(e)))
        try:
            guarantee = ("prevents collisions" if driver.prevents_collisions
                         else "makes collisions rarer, not impossible; "
                         "switching to 'db' or 'lock' removes them (see the "
                         "operations guide)")
        finally:
            driver.close()
        return _result(SUCCESS, "Driver %r loads and %s."
                       % (name, guarantee))

    @_guarded
    def check_database(self):
        """The ``db`` driver's tables are at the head revision."""
        if self.driver_name != "db":
            return _result(SUCCESS, "Not used by driver %r."
                           % self.driver_name)
        try:
            url = api.safe_url(api.connection_url(self.conf))
            current = migration.current_revision(self.conf)
        except (exceptions.BackendUnavailable,
                exceptions.InvalidConfig) as e:
            return _result(FAILURE, "%s." % _clause(e))
        head = migration.head_revision()
        sync = ("run 'murano-cidr-manage --config-file <file> db sync' "
                "before restarting the services")
        if current is None:
            return _result(FAILURE, "The allocation database %s has no "
                           "murano-cidr tables; %s." % (url, sync))
        if current == head:
            return _result(SUCCESS, "The allocation database %s is at the "
                           "head revision %s." % (url, head))
        if current in migration.known_revisions():
            return _result(FAILURE, "The allocation database %s is at "
                           "revision %s, this code needs %s; %s."
                           % (url, current, head, sync))
        return _result(WARNING, "The allocation database %s is at revision "
                       "%s, which this code does not know (its head is %s): "
                       "its schema is newer. Upgrade murano-cidr on this "
                       "host." % (url, current, head))

    @_guarded
    def check_lock_service(self):
        """The ``lock`` driver's lock service answers."""
        if self.driver_name != "lock":
            return _result(SUCCESS, "Not used by driver %r."
                           % self.driver_name)
        url = (self.conf[opts.GROUP].coordination_url or "").strip()
        if not url:
            path = lock_driver.lock_path(self.conf)
            reason = _writable_dir(path)
            if reason is not None:
                return _result(FAILURE, "File locks cannot be taken: %s. "
                               "Fix the permissions or set "
                               "[oslo_concurrency] lock_path." % reason)
            return _result(SUCCESS, "File locks under %s (one host only; "
                           "set [cidr_allocator] coordination_url when "
                           "engines run on several hosts)." % path)
        return self._check_coordinator(url)

    def _check_coordinator(self, url):
        shown = tooz_backend.safe_url(url)
        reason = _tcp_probe(url)
        if reason is not None:
            return _result(FAILURE, "The lock service %s does not answer: "
                           "%s. Check [cidr_allocator] coordination_url and "
                           "that the service runs." % (shown, reason))
        try:
            coordinator = coordination.get_coordinator(
                url, b"murano-cidr-status-%d" % os.getpid())
            coordinator.start(start_heart=False)
        except ImportError as e:
            return _result(FAILURE, "The client library of %s is not "
                           "installed (%s); install the matching extra, "
                           "e.g. 'pip install murano-cidr[redis]'."
                           % (shown, e))
        except (tooz.ToozError, ValueError, RuntimeError) as e:
            return _result(FAILURE, "The lock service %s does not answer: "
                           "%s. Check [cidr_allocator] coordination_url and "
                           "that the service runs." % (shown, _clause(e)))
        try:
            coordinator.stop()
        except tooz.ToozError as e:
            LOG.debug("Stopping the coordinator failed: %s", e)
        return _result(SUCCESS, "The lock service %s answers." % shown)

    _upgrade_checks = (
        ("Pool geometry", check_pool),
        ("Allocator driver", check_driver),
        ("Database", check_database),
        ("Lock service", check_lock_service),
    )


def main(argv=None):
    """Entry point of the ``murano-cidr-status`` console script.

    :param argv: the arguments, without the program name; ``sys.argv[1:]``
        if None.
    :returns: the exit code.
    """
    conf = cfg.ConfigOpts()
    opts.register_opts(conf)
    common.register_logging(conf)
    opts.set_command_defaults(conf)
    argv = sys.argv[1:] if argv is None else argv

    def _run():
        upgradecheck.register_cli_options(conf, Checks(conf))
        common.parse(conf, argv, PROG, DESCRIPTION)
        common.setup_logging(conf)
        # NOTE: what upgradecheck.main() does besides parsing, which is
        # done here to add --version and the description: the checks read
        # --json from the module's CONF.
        upgradecheck.CONF = conf
        return int(upgradecheck.run(conf))

    return common.run(PROG, _run, conf)


if __name__ == "__main__":
    sys.exit(main())
