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

"""The driver a command works with, and the line that says which it is."""

from oslo_log import log as logging

from murano_cidr.engine import allocator
from murano_cidr.operator import confutils
from murano_cidr import opts

LOG = logging.getLogger(__name__)


def describe(driver):
    """Say where a driver keeps its state, without a password.

    :param driver: an
        :class:`~murano_cidr.engine.drivers.base.AllocatorDriver`.
    :returns: e.g. ``"database postgresql://u:***@host/db"``, ``"lock
        service redis://host:6379"`` or ``"no store"``.
    """
    database = getattr(driver, "database", None)
    if database is not None:
        return "database %s" % database.safe_url
    backend = getattr(driver, "backend", None)
    if backend is not None:
        return "lock service %s" % backend.description
    return "no store"


def open_driver(conf, require=(), action=None):
    """Build the configured driver and log, at INFO, what it works with.

    One line names the configuration files read, the driver and its store
    (``--verbose`` shows it).

    :param conf: the command's parsed configuration.
    :param require: the capabilities the command needs (see
        :func:`murano_cidr.engine.allocator.get_allocator`).
    :param action: what the command does, for a missing capability.
    :returns: the driver, a context manager that closes it.
    :raises murano_cidr.exceptions.MuranoCidrException: as
        :func:`murano_cidr.engine.allocator.get_allocator` does.
    """
    driver = allocator.get_allocator(conf, require=require, action=action)
    LOG.info("Configuration: %s; driver %s, %s",
             confutils.used_files(conf), conf[opts.GROUP].driver,
             describe(driver))
    return driver
