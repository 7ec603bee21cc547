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

"""Which drivers are installed, and what installs their back ends' clients.

Read by the commands and the tools, and to word the error of a driver
that cannot be loaded (:func:`murano_cidr.engine.allocator.driver_class`,
:func:`load_failed`): an engine whose driver loads never imports it.
"""

import importlib
import importlib.metadata

import stevedore

from murano_cidr._i18n import _
from murano_cidr.engine import drivers
from murano_cidr import exceptions


def names():
    """Return the names of the drivers that are installed and load.

    :returns: a sorted list of names.
    """
    manager = stevedore.ExtensionManager(drivers.NAMESPACE,
                                         invoke_on_load=False)
    return sorted(manager.names())


def extras_of(name):
    """Return the extras a driver's package declares, without loading it.

    A driver's module may fail to import for want of an optional library,
    so its class cannot say what to install; its package's ``__init__``
    (which imports nothing optional) may, as ``EXTRAS``.

    :param name: the driver's name.
    :returns: a tuple of extras' names, empty if none is declared.
    """
    for entry_point in _entry_points():
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
    """Return the error of a driver that a missing module keeps from loading.

    :param name: the driver's name.
    :param error: the :class:`ImportError`.
    :param extras: the extras that install its back ends' client libraries
        (its class's ``extras``, or its package's: :func:`extras_of`).
    :returns: a :class:`~murano_cidr.exceptions.DriverLoadFailed` saying
        what to install.
    """
    if extras:
        advice = _("install it, or the extra of your backend: %s") % (
            " or ".join("'pip install murano-cidr[%s]'" % extra
                        for extra in extras))
    else:
        advice = _("install it, or reinstall murano-cidr")
    return exceptions.DriverLoadFailed(name=name, module=error.name or "?",
                                       reason=error, advice=advice)


def _entry_points():
    found = importlib.metadata.entry_points()
    if hasattr(found, "select"):
        return list(found.select(group=drivers.NAMESPACE))
    # NOTE: Python < 3.10 returns a dictionary by group.
    return list(found.get(drivers.NAMESPACE, ()))
