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

"""The one place an allocator driver is chosen and loaded."""

import importlib
import importlib.metadata

from oslo_config import cfg
from oslo_log import log as logging
import stevedore
from stevedore import exception as stevedore_exc

from murano_cidr._i18n import _
from murano_cidr.engine import drivers
from murano_cidr import exceptions
from murano_cidr import opts

LOG = logging.getLogger(__name__)


def _reraise(manager, entrypoint, exception):
    raise exception


def driver_class(conf=None, name=None):
    """Load the class of the configured driver, or of a named one.

    :param conf: the configuration; the global one if None.
    :param name: a driver name; ``[cidr_allocator] driver`` if None.
    :returns: a subclass of
        :class:`~murano_cidr.engine.drivers.base.AllocatorDriver`.
    :raises murano_cidr.exceptions.DriverNotFound: if it is not installed.
    :raises murano_cidr.exceptions.DriverLoadFailed: if a module it imports
        is missing.
    """
    if name is None:
        if conf is None:
            conf = cfg.CONF
        opts.register_common_opts(conf)
        name = conf[opts.GROUP].driver
    try:
        manager = stevedore.DriverManager(
            drivers.NAMESPACE, name, invoke_on_load=False,
            on_load_failure_callback=_reraise,
            warn_on_missing_entrypoint=False)
    except stevedore_exc.NoMatches:
        raise exceptions.DriverNotFound(
            name=name,
            available=", ".join(installed_names()) or "none")
    except ImportError as e:
        raise load_failed(name, e, extras_of(name)) from e
    return manager.driver


def get_allocator(conf=None, require=(), action=None):
    """Build the driver chosen by ``[cidr_allocator] driver``.

    :param conf: the configuration; the global one if None.
    :param require: the
        :class:`~murano_cidr.engine.drivers.capabilities.Capability` (or
        an iterable of them) the caller needs.
    :param action: what the caller is about to do, for the message.
    :returns: an :class:`~murano_cidr.engine.drivers.base.AllocatorDriver`.
    :raises murano_cidr.exceptions.DriverNotFound: if it is not installed.
    :raises murano_cidr.exceptions.DriverLoadFailed: if a module it imports
        is missing.
    :raises murano_cidr.exceptions.CapabilityMissing: if it lacks a required
        capability; nothing is built.
    :raises murano_cidr.exceptions.InvalidConfig: if an option is invalid.
    """
    if conf is None:
        conf = cfg.CONF
    cls = driver_class(conf)
    cls.require(require, action=action)
    try:
        driver = cls(conf)
    except ImportError as e:
        raise load_failed(cls.name, e, cls.extras) from e
    LOG.debug("Loaded CIDR allocator driver %s", cls.name)
    return driver


def installed_names():
    """Return the sorted names of the drivers installed (they load)."""
    manager = stevedore.ExtensionManager(drivers.NAMESPACE,
                                         invoke_on_load=False)
    return sorted(manager.names())


def extras_of(name):
    """Return the ``EXTRAS`` a driver's package declares, without its class.

    :returns: a tuple of extras' names, empty if none is declared.
    """
    found = importlib.metadata.entry_points()
    # NOTE: Python < 3.10 returns a dictionary by group.
    found = (found.select(group=drivers.NAMESPACE) if hasattr(found, "select")
             else found.get(drivers.NAMESPACE, ()))
    for entry_point in found:
        if entry_point.name != name:
            continue
        parts = entry_point.value.split(":")[0].split(".")
        for end in range(len(parts) - 1, 0, -1):
            try:
                package = importlib.import_module(".".join(parts[:end]))
            except ImportError:
                continue
            extras = getattr(package, "EXTRAS", None)
            if extras is not None:
                return tuple(extras)
    return ()


def load_failed(name, error, extras):
    """Return the error of a driver a missing module keeps from loading.

    :param error: the :class:`ImportError`.
    :param extras: the extras that install its back ends' clients.
    :returns: a :class:`~murano_cidr.exceptions.DriverLoadFailed`.
    """
    if extras:
        advice = _("install it, or the extra of your backend: %s") % (
            " or ".join("'pip install murano-cidr[%s]'" % extra
                        for extra in extras))
    else:
        advice = _("install it, or reinstall murano-cidr")
    return exceptions.DriverLoadFailed(name=name, module=error.name or "?",
                                       reason=error, advice=advice)
