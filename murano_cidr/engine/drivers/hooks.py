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

"""What is asked of a driver class, without building a driver.

Commands never name a driver: they load its class and ask it what it can
do, which options are its own and which extras install its clients. What
only the commands ask is the driver's command side, in the operator's wing.
"""

from murano_cidr.engine.drivers import capabilities as caps
from murano_cidr import opts


class DriverHooks(object):
    """The class-level side of an allocator driver (see the module).

    :cvar name: the driver's entry point name.
    :cvar capabilities: a frozenset of
        :class:`~murano_cidr.engine.drivers.capabilities.Capability`.
    :cvar limitations: why the driver lacks a capability, by capability,
        in words for an operator (else :data:`.capabilities.DEFAULT_REASONS`).
    :cvar extras: the names of murano-cidr's extras (``pip install
        murano-cidr[extra]``) that install the client libraries of the
        driver's back ends.
    """

    name = None
    capabilities = frozenset()
    limitations = {}
    extras = ()

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
    def has(cls, capability):
        """Tell whether the driver has a capability.

        :param capability: a
            :class:`~murano_cidr.engine.drivers.capabilities.Capability`.
        """
        return capability in cls.capabilities

    @classmethod
    def require(cls, require, action=None):
        """Refuse what needs a capability the driver lacks.

        :param require: a
            :class:`~murano_cidr.engine.drivers.capabilities.Capability` or an
            iterable of them.
        :param action: what was asked, e.g. ``"list allocations"``, for the
            message; the capability's own description if None.
        :raises murano_cidr.exceptions.CapabilityMissing: naming the first
            capability missing, and why the driver lacks it.
        """
        for capability in caps.normalise(require):
            if capability not in cls.capabilities:
                raise caps.capability_missing(cls, capability, action)
