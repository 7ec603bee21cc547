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

"""A driver's side of the commands: what an operator's tools ask of it.

Commands never name a driver. Besides its class (what it can do, its
options: :class:`~murano_cidr.engine.drivers.base.AllocatorDriver`), a driver's
package may register, under :data:`NAMESPACE` and the driver's name, a
:class:`DriverCommands` subclass: prepare your store (:meth:`prepare`),
check that you are ready (:meth:`upgrade_checks`), the defaults a console
script wants (:meth:`command_defaults`), your ``murano-cidr-manage``
commands (:meth:`manage_commands`). It lives in a module of its own, which
only the commands, the tools and the tests load: a service that builds the
driver never imports migrations, status checks or command parsers.

Every installed driver's options are gathered here too, for the sample
configuration (:func:`list_opts`) and for the programs that read options
of drivers they have not built (:func:`register_opts`).
"""

import copy
import functools

from oslo_log import log as logging
import stevedore

from murano_cidr.engine import allocator
from murano_cidr.engine import drivers
from murano_cidr import opts

LOG = logging.getLogger(__name__)

#: The entry point namespace of the drivers' command sides.
NAMESPACE = "murano_cidr.allocator_commands"
_WHAT = "The commands of allocator driver %s"


class DriverCommands(object):
    """What the commands ask of a driver; a driver without any gets this."""

    @classmethod
    def prepare(cls, conf):
        """Create what the driver needs before its first use.

        ``murano-cidr-manage``, the simulator and the benchmarks call it
        (through :func:`prepare`); the ``db`` driver creates or upgrades its
        tables here. The default does nothing. It must be safe to run again.

        :param conf: an :class:`oslo_config.cfg.ConfigOpts` with the
            driver's options registered.
        :raises murano_cidr.exceptions.MuranoCidrException: if the store
            cannot be prepared.
        """

    @classmethod
    def upgrade_checks(cls):
        """Return the driver's checks for ``murano-cidr-status upgrade check``.

        Each check is called with the configuration and returns an
        :class:`oslo_upgradecheck.upgradecheck.Result` whose details are one
        line saying what to do. It is run only when the driver is the
        configured one; otherwise the command reports it as not used.
        An exception it raises is reported as a failure.

        :returns: a list of ``(title, check)`` pairs.
        """
        return []

    @classmethod
    def command_defaults(cls, conf):
        """Set the defaults of the driver's options for a console script.

        A command an operator waits for wants short timeouts where a
        service wants patience: the ``db`` driver waits seconds, not
        minutes, for an unreachable database. The options are registered;
        values from configuration files still win. The default sets none.

        :param conf: an :class:`oslo_config.cfg.ConfigOpts`.
        """

    @classmethod
    def manage_commands(cls, subparsers):
        """Add the driver's commands to ``murano-cidr-manage``.

        The ``db`` driver adds ``db sync``, ``db version`` and ``db
        stamp``. Each parser sets ``action``, a callable taking the
        configuration and returning an exit code (or None). The default adds
        none.

        :param subparsers: the ``argparse`` sub-parsers of the command line.
        """


def driver_classes():
    """Return the class of every installed driver that loads, by name.

    A driver whose module cannot be imported (an optional library is
    missing) is left out and logged; allocator.get_allocator reports it
    when it is the configured one.

    :returns: a dictionary from entry point name to driver class, in name
        order.
    """
    return loaded(drivers.NAMESPACE, "Allocator driver %s")


def loaded(namespace, what):
    """Return what each entry point of ``namespace`` that loads names.

    One that cannot be loaded is left out and logged (:func:`log_failure`).

    :param namespace: an entry point namespace.
    :param what: how the log names an entry point, ``%s`` its name.
    :returns: a dictionary from entry point name to the object it names,
        in name order.
    """
    manager = stevedore.ExtensionManager(
        namespace, invoke_on_load=False,
        on_load_failure_callback=functools.partial(log_failure, what))
    return {ext.name: ext.plugin
            for ext in sorted(manager, key=lambda ext: ext.name)}


def log_failure(what, manager, entrypoint, exception):
    """Log an entry point stevedore could not load (its failure callback).

    :param what: how to name the entry point, ``%s`` its name.
    """
    LOG.warning(what + " cannot be loaded: %s", entrypoint.name, exception)


def installed():
    """Return the command side of every installed driver that has one.

    A command side that cannot be loaded is left out and logged.

    :returns: a dictionary from driver name to :class:`DriverCommands`
        subclass, in name order.
    """
    return loaded(NAMESPACE, _WHAT)


def of(name):
    """Return a driver's command side; :class:`DriverCommands` if none.

    :param name: the driver's name.
    """
    return installed().get(name, DriverCommands)


def prepare(conf, name=None):
    """Prepare a driver's store (``murano-cidr-manage``, the tools).

    :param conf: an :class:`oslo_config.cfg.ConfigOpts`.
    :param name: the driver's name; ``[cidr_allocator] driver`` if None.
    :raises murano_cidr.exceptions.DriverNotFound: if the driver is not
        installed.
    :raises murano_cidr.exceptions.MuranoCidrException: whatever the
        driver's :meth:`DriverCommands.prepare` raises.
    """
    cls = allocator.driver_class(conf, name)
    cls.register_opts(conf)
    of(name or conf[opts.GROUP].driver).prepare(conf)


def register_opts(conf):
    """Register murano-cidr's options and every installed driver's.

    What a tool or a test calls before it reads or overrides any option
    (``[cidr_allocator_database] connection``, say) of a driver it has not
    built yet; a service leaves it to the driver it builds. The drivers'
    options come from :data:`murano_cidr.opts.OPTS_NAMESPACE`: their
    options modules load, their drivers do not. Safe to call more than
    once on the same configuration object.

    :param conf: an :class:`oslo_config.cfg.ConfigOpts`.
    """
    opts.register_common_opts(conf)
    for listed in _drivers_opts():
        opts.register_listed(conf, listed)


def _drivers_opts():
    # Each installed driver's options, in driver name order; one whose
    # options cannot be loaded is logged and left out.
    return [list_opts() for list_opts in loaded(
        opts.OPTS_NAMESPACE,
        "The options of allocator driver %s").values()]


def list_opts():
    """Return the options for oslo-config-generator and the docs.

    murano-cidr's own, then each installed driver's, found through
    :data:`murano_cidr.opts.OPTS_NAMESPACE` as castellan finds its back
    ends': a driver's options live in its package, which registers its
    ``list_opts`` function there.

    :returns: a list of ``(group, [options])`` pairs.
    """
    listed = [(opts.cidr_allocator_group, copy.deepcopy(opts.all_opts()))]
    for pairs in _drivers_opts():
        listed.extend(pairs)
    return listed


def set_command_defaults(conf, configured_only=False):
    """Give the options the defaults a console script wants.

    Every option is registered (:func:`register_opts`),
    then each installed driver's :meth:`DriverCommands.command_defaults`
    runs; values from the configuration files still win.

    :param conf: an :class:`oslo_config.cfg.ConfigOpts`.
    :param configured_only: only the command side of the driver of
        ``[cidr_allocator] driver`` is loaded and run (a parsed ``conf``):
        a command loads no other driver's modules.
    """
    register_opts(conf)
    if not configured_only:
        sides = installed().values()
    else:
        sides = [ext.plugin for ext in stevedore.NamedExtensionManager(
            NAMESPACE, [conf[opts.GROUP].driver], invoke_on_load=False,
            on_load_failure_callback=functools.partial(log_failure,
                                                       _WHAT),
            warn_on_missing_entrypoint=False)]
    for commands in sides:
        commands.command_defaults(conf)
