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

from murano_cidr import exceptions
from murano_cidr import opts

LOG = logging.getLogger(__name__)

#: The entry point namespace drivers register under.
NAMESPACE = "murano_cidr.allocators"


def installed_drivers():
    """Return the names of the drivers that are installed and load.

    :returns: a sorted list of names.
    """
    manager = stevedore.ExtensionManager(NAMESPACE, invoke_on_load=False)
    return sorted(manager.names())


def _reraise(manager, entrypoint, exception):
    raise exception


def get_allocator(conf=None):
    """Build the allocator driver chosen by ``[cidr_allocator] driver``.

    The options are registered on ``conf`` first, and the driver validates
    its configuration when it is built.

    :param conf: an :class:`oslo_config.cfg.ConfigOpts`; the global
        :data:`oslo_config.cfg.CONF` if None.
    :returns: an :class:`~murano_cidr.drivers.base.AllocatorDriver`.
    :raises murano_cidr.exceptions.DriverNotFound: if no driver of that name
        is installed; the message lists those that are.
    :raises murano_cidr.exceptions.DriverLoadFailed: (a DriverNotFound) if
        it is installed but a module it imports is missing; the message
        names the module and the extras that install it.
    :raises murano_cidr.exceptions.InvalidConfig: if an option is invalid.
    """
    if conf is None:
        conf = cfg.CONF
    opts.register_opts(conf)
    name = conf[opts.GROUP].driver
    try:
        manager = stevedore.DriverManager(
            NAMESPACE, name, invoke_on_load=False,
            on_load_failure_callback=_reraise,
            warn_on_missing_entrypoint=False)
    except stevedore_exc.NoMatches:
        raise exceptions.DriverNotFound(
            name=name, available=", ".join(installed_drivers()) or "none")
    except ImportError as e:
        raise exceptions.DriverLoadFailed(
            name=name, module=e.name or "?", reason=e) from e
    driver = manager.driver(conf)
    LOG.debug("Loaded CIDR allocator driver %s", name)
    return driver
