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

from oslo_config import cfg
from oslo_log import log as logging
import stevedore
from stevedore import exception as stevedore_exc

from murano_cidr.engine import drivers
from murano_cidr.engine.drivers import installed
from murano_cidr import exceptions
from murano_cidr import opts

LOG = logging.getLogger(__name__)


def _reraise(manager, entrypoint, exception):
    raise exception


def driver_class(conf=None, name=None):
    """Load the class of the configured driver, or of a named one.

    :param conf: an :class:`oslo_config.cfg.ConfigOpts`; the global
        :data:`oslo_config.cfg.CONF` if None.
    :param name: a driver name; ``[cidr_allocator] driver`` if None.
    :returns: a subclass of
        :class:`~murano_cidr.engine.drivers.base.AllocatorDriver`.
    :raises murano_cidr.exceptions.DriverNotFound: if no driver of that name
        is installed; the message lists those that are.
    :raises murano_cidr.exceptions.DriverLoadFailed: (a DriverNotFound) if
        it is installed but a module it imports is missing; the message
        names the module and the extras that install it.
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
            available=", ".join(installed.names()) or "none")
    except ImportError as e:
        raise installed.load_failed(name, e, installed.extras_of(name)) from e
    return manager.driver


def get_allocator(conf=None, require=(), action=None):
    """Build the allocator driver chosen by ``[cidr_allocator] driver``.

    The options are registered on ``conf`` first, and the driver validates
    its configuration when it is built. A command that needs a capability
    says so with ``require``, and learns that the driver lacks it before
    the driver is built.

    :param conf: an :class:`oslo_config.cfg.ConfigOpts`; the global
        :data:`oslo_config.cfg.CONF` if None.
    :param require: a
        :class:`~murano_cidr.engine.drivers.capabilities.Capability`, or an
        iterable of them, that the caller needs.
    :param action: what the caller is about to do, e.g. ``"list
        allocations"``, for the message if a capability is missing.
    :returns: an :class:`~murano_cidr.engine.drivers.base.AllocatorDriver`.
    :raises murano_cidr.exceptions.DriverNotFound: if no driver of that name
        is installed; the message lists those that are.
    :raises murano_cidr.exceptions.DriverLoadFailed: (a DriverNotFound) if
        it is installed but a module it imports, when it is loaded or
        built, is missing; the message names the module and the extras
        that install it (the driver's ``extras``).
    :raises murano_cidr.exceptions.CapabilityMissing: if the driver lacks a
        required capability; nothing is built.
    :raises murano_cidr.exceptions.InvalidConfig: if an option is invalid.
    """
    if conf is None:
        conf = cfg.CONF
    cls = driver_class(conf)
    cls.require(require, action=action)
    try:
        driver = cls(conf)
    except ImportError as e:
        # A client library the driver imports only when it is built.
        raise installed.load_failed(cls.name, e, cls.extras) from e
    LOG.debug("Loaded CIDR allocator driver %s", cls.name)
    return driver
