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

"""What the commands ask of a driver class, without building a driver.

Commands never name a driver. They load its class and ask it: what can you
do (:attr:`DriverHooks.capabilities`), which options are yours
(:meth:`DriverHooks.list_opts`), prepare your store
(:meth:`DriverHooks.prepare`), check that you are ready
(:meth:`DriverHooks.upgrade_checks`), which extras install your client
libraries (:attr:`DriverHooks.extras`). Adding a driver then touches only
its own package and the entry point in ``setup.cfg``.
"""

from murano_cidr.drivers import capabilities as caps
from murano_cidr import exceptions
from murano_cidr import opts


class DriverHooks(object):
    """The class-level side of an allocator driver.

    A driver announces what it can do in :attr:`capabilities`, the way tooz
    drivers announce their characteristics, and everything else the
    commands need through class-level hooks (:meth:`list_opts`,
    :meth:`prepare`, :meth:`upgrade_checks`, :attr:`extras`), so that no
    command names a driver.

    :cvar name: the driver's entry point name.
    :cvar capabilities: a frozenset of
        :class:`~murano_cidr.drivers.capabilities.Capability`.
    :cvar limitations: why the driver lacks a capability, by capability,
        in words for an operator (the defaults of
        :data:`~murano_cidr.drivers.capabilities.DEFAULT_REASONS` otherwise).
    :cvar extras: the names of murano-cidr's extras (``pip install
        murano-cidr[extra]``) that install the client libraries of the
        driver's back ends.
    """

    name = None
    capabilities = frozenset()
    limitations = {}
    extras = ()

    # -- hooks the commands call on the class, before or without a driver --

    @classmethod
    def list_opts(cls):
        """Return the driver's own options, for the sample configuration.

        The options every driver reads (``[cidr_allocator]`` driver, pool)
        are murano-cidr's, not the driver's: leave them out.

        :returns: a list of ``(group, [options])`` pairs, as
            oslo-config-generator takes them; a group is an
            :class:`oslo_config.cfg.OptGroup` or a name.
        """
        return []

    @classmethod
    def register_opts(cls, conf):
        """Register murano-cidr's options and the driver's own on ``conf``.

        Safe to call more than once on the same configuration object.

        :param conf: an :class:`oslo_config.cfg.ConfigOpts`.
        """
        opts.register_common_opts(conf)
        opts.register_listed(conf, cls.list_opts())

    @classmethod
    def prepare(cls, conf):
        """Create what the driver needs before its first use.

        ``murano-cidr-manage``, the simulator and the benchmarks call it;
        the ``db`` driver creates or upgrades its tables here. The default
        does nothing. It must be safe to run again.

        :param conf: an :class:`oslo_config.cfg.ConfigOpts`.
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

    @classmethod
    def has(cls, capability):
        """Tell whether the driver has a capability.

        :param capability: a
            :class:`~murano_cidr.drivers.capabilities.Capability`.
        """
        return capability in cls.capabilities

    @classmethod
    def require(cls, require, action=None):
        """Refuse what needs a capability the driver lacks.

        :param require: a
            :class:`~murano_cidr.drivers.capabilities.Capability` or an
            iterable of them.
        :param action: what was asked, e.g. ``"list allocations"``, for the
            message; the capability's own description if None.
        :raises murano_cidr.exceptions.CapabilityMissing: naming the first
            capability missing, and why the driver lacks it.
        """
        for capability in caps.normalise(require):
            if capability in cls.capabilities:
                continue
            reason = cls.limitations.get(
                capability, caps.DEFAULT_REASONS[capability])
            raise exceptions.CapabilityMissing(
                driver=cls.name, capability=capability.value,
                action=action or caps.DEFAULT_ACTIONS[capability],
                reason=reason)
