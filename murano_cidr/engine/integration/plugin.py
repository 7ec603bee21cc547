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

"""The Murano engine plugin: the engine's CIDR pick, with no edit to Murano.

:func:`install` sets the
:class:`~murano_cidr.engine.integration.murano.ExplorerMethods` on one of
the :data:`KNOWN_EXPLORERS`, or changes nothing, and logs which and why
(doc/source/integration/murano.rst, "The engine plugin").
"""

import inspect
import sys
import threading

from oslo_config import cfg
from oslo_log import log as logging

from murano_cidr.engine import allocator
from murano_cidr.engine.integration import murano
from murano_cidr import exceptions
from murano_cidr import opts

LOG = logging.getLogger(__name__)

#: The distribution name ``[murano] enabled_plugins`` lists.
PROJECT = "murano-cidr"

#: The entry point's name in ``io.murano.plugins.packages``.
FORMAT = "murano-cidr-engine-plugin/1.0"

#: Where Murano's ``NetworkExplorer`` is.
EXPLORER_MODULE = "murano.engine.system.net_explorer"

#: The ``NetworkExplorer`` families the plugin changes, by signature.
KNOWN_EXPLORERS = {
    "train-2023.2": {
        "__init__": "(self, this, region_name=None)",
        "get_available_cidr": "(self, router_id, net_id, ip_version=4)",
        "get_default_dns": "(self, ip_version=4)",
        "get_default_router": "(self)",
        "_get_cidrs_taken_by_router": "(self, router_id)",
        "list_neutron_extensions": "(self)",
    },
}

#: What the plugin adds; an explorer with them was patched by hand.
ADDED = ("confirm_cidr", "release_cidr")

#: What :func:`install` can conclude.
INSTALLED = "installed"
UNCONFIGURED = "unconfigured"
DISABLED = "disabled"
NO_ENGINE = "no-engine"
UNKNOWN_EXPLORER = "unknown-explorer"

_outcome = None
_guard = threading.Lock()


class EnginePlugin(object):
    """What Murano's plugin loader loads; see the module's documentation."""

    def __init__(self, *args, **kwargs):
        # NOTE: no package is of this format; Murano's loaders catch its
        # own PackageFormatError and refuse the package, nothing else.
        error = exceptions.InvalidArgument(
            name="package format", value=FORMAT,
            reason="it is murano-cidr's engine plugin, not a package format")
        murano_errors = sys.modules.get("murano.packages.exceptions")
        if murano_errors is not None:
            raise murano_errors.PackageFormatError(str(error)) from error
        raise error

    @classmethod
    def init_plugin(cls):
        """Called by Murano's loader: :func:`install` on ``cfg.CONF``.

        Never raises: an exception here would fail the loader, and with it
        every package the engine loads.
        """
        try:
            install()
        except Exception:
            LOG.exception("murano-cidr: the engine plugin failed; the "
                          "engine picks subnet CIDRs itself")


def install(conf=None):
    """Route the engine's CIDR pick through murano-cidr, once per process.

    :param conf: the engine's configuration; the global one if None.
    :returns: :data:`INSTALLED`, :data:`UNCONFIGURED`, :data:`DISABLED`,
        :data:`NO_ENGINE` or :data:`UNKNOWN_EXPLORER`.
    """
    global _outcome
    with _guard:
        if _outcome is None:
            _outcome = _install(cfg.CONF if conf is None else conf)
        return _outcome


def reset():
    """Forget the outcome, so :func:`install` decides again (tests)."""
    global _outcome
    with _guard:
        _outcome = None


def recognise(explorer):
    """Name the family of a ``NetworkExplorer`` class, or say why not.

    :returns: ``(family, None)`` or ``(None, reason)``.
    """
    if not inspect.isclass(explorer):
        return None, "there is no NetworkExplorer class"
    added = [name for name in ADDED if hasattr(explorer, name)]
    if added:
        return None, ("it already has %s (patched by hand?)"
                      % ", ".join(added))
    if not isinstance(inspect.getattr_static(explorer, "_client", None),
                      property):
        return None, "it has no _client property"
    differences = []
    for family, expected in sorted(KNOWN_EXPLORERS.items()):
        found = {name: _signature(explorer, name) for name in expected}
        if found == expected:
            return family, None
        differences.extend(
            "%s%s instead of %s%s (%s)" % (name, found[name], name,
                                           expected[name], family)
            for name in sorted(expected) if found[name] != expected[name])
    return None, "its methods differ: " + "; ".join(differences)


def _signature(cls, name):
    method = inspect.getattr_static(cls, name, None)
    if not inspect.isfunction(method):
        return "(missing)"
    return str(inspect.signature(method))


def _enabled_plugins(conf):
    try:
        return conf.murano.enabled_plugins
    except (cfg.NoSuchOptError, cfg.NoSuchGroupError, AttributeError):
        # NOTE: Murano registers [murano]; outside an engine it may not be.
        return None


def driver_set_in(conf):
    """Say where ``[cidr_allocator] driver`` is set explicitly, if it is.

    A default, the option's or one set by code, is no choice.

    :param conf: a configuration with murano-cidr's options registered.
    :returns: the file (or other source) that sets it, or None.
    """
    location = conf.get_location("driver", group=opts.GROUP)
    defaults = (cfg.Locations.opt_default, cfg.Locations.set_default)
    if location is None or location.location in defaults:
        return None
    return location.detail or location.location.name


def _install(conf):
    enabled = _enabled_plugins(conf)
    if enabled is not None and PROJECT not in enabled:
        LOG.info("murano-cidr is not in [murano] enabled_plugins: the "
                 "engine picks subnet CIDRs itself, as before")
        return DISABLED
    opts.register_common_opts(conf)
    where = driver_set_in(conf)
    if where is None:
        LOG.info("murano-cidr: [cidr_allocator] driver is not set in the "
                 "engine's configuration: the engine picks subnet CIDRs "
                 "itself, as before")
        return UNCONFIGURED
    # NOTE: not imported: an engine has it already; Murano's API, which
    # loads the plugin too, has none.
    module = sys.modules.get(EXPLORER_MODULE)
    if module is None:
        LOG.info("murano-cidr: no Murano engine in this process (%s is not "
                 "loaded): nothing changed", EXPLORER_MODULE)
        return NO_ENGINE
    explorer = getattr(module, "NetworkExplorer", None)
    family, reason = recognise(explorer)
    if family is None:
        LOG.warning("murano-cidr: %s.NetworkExplorer is not one murano-cidr "
                    "knows, so it is left unchanged and the engine picks "
                    "subnet CIDRs itself: %s", EXPLORER_MODULE, reason)
        return UNKNOWN_EXPLORER
    driver = conf[opts.GROUP].driver
    try:
        allocator.driver_class(conf)
    except exceptions.DriverNotFound as e:
        LOG.error("murano-cidr: %s; every deployment that needs a subnet "
                  "CIDR fails until it is fixed", e)
    _change(explorer)
    LOG.info("murano-cidr: the engine's subnet CIDRs now come from the %s "
             "driver ([cidr_allocator] driver, set in %s; NetworkExplorer "
             "of Murano %s)", driver, where, family)
    return INSTALLED


def _change(explorer):
    # NOTE: Murano's DSL reads the class's methods (names and signatures)
    # after the loader has run: plain functions are what it expects.
    for name in ("get_available_cidr",) + ADDED:
        setattr(explorer, name, murano.ExplorerMethods.__dict__[name])
