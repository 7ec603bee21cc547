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

"""The allocator drivers, and how the installed ones are found.

A driver is a class registered under the :data:`NAMESPACE` entry point
namespace; everything about it lives in its own module or package.
"""

import functools

from oslo_log import log as logging
import stevedore

LOG = logging.getLogger(__name__)

#: The entry point namespace drivers register under.
NAMESPACE = "murano_cidr.allocators"


def driver_classes():
    """Return the class of every installed driver that loads, by name.

    A driver whose module cannot be imported (an optional library is
    missing) is left out and logged; allocator.get_allocator reports it
    when it is the configured one.

    :returns: a dictionary from entry point name to driver class, in name
        order.
    """
    return loaded(NAMESPACE, "Allocator driver %s")


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
