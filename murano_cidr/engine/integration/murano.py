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

"""What Murano's ``NetworkExplorer`` calls instead of picking CIDRs itself.

The engine keeps its Neutron client and its MuranoPL; its
``get_available_cidr`` calls :func:`get_available_cidr` with the client, and
two new methods call :func:`confirm_cidr` and :func:`release_cidr`. The engine
plugin (:mod:`murano_cidr.engine.integration.plugin`) sets these methods, three
lines of its own, on Murano's class, with no edit to Murano's Python. MuranoPL
calls the last two once the core library has the optional change
(:mod:`murano_cidr.operator.muranopl_patch`). ``net_id`` is MuranoPL's
``id($)`` of the ``NeutronNetwork`` object, not a Neutron network id; integer
ids, as Murano's unit tests pass, are their decimal strings.

The CIDRs already on the router are read from the engine's client the way
the engine always read them (the router's ports, their subnet ids, those
subnets' CIDRs), filtered to the router's subnets and lazily: the driver is
handed a :class:`~murano_cidr.engine.integration.neutron.RouterReader` and
reads the router at the moment it decides, after it holds its lock or row.
"""

import collections
import os
import threading

from oslo_config import cfg
from oslo_log import log as logging

from murano_cidr.engine import allocation
from murano_cidr.engine import allocator
from murano_cidr.engine.drivers import capabilities
from murano_cidr.engine.integration import neutron
from murano_cidr import exceptions

LOG = logging.getLogger(__name__)


class NetworkCidrAllocator(object):
    """The allocator as the Murano engine uses it.

    :param conf: the :class:`oslo_config.cfg.ConfigOpts` to read
        ``[cidr_allocator]`` from; the global one if None.
    :param driver: an already built
        :class:`~murano_cidr.engine.drivers.base.AllocatorDriver`, instead of
        the one ``conf`` chooses.
    :raises murano_cidr.exceptions.DriverNotFound: if the configured driver
        is not installed.
    :raises murano_cidr.exceptions.InvalidConfig: if an option is invalid.

    A warning is logged when the driver's store serves one host only (an
    SQLite database, file locks).

    :ivar confirm_failures: a :class:`collections.Counter` of the
        confirmations that failed, by error class name.
    :ivar release_failures: the same, of the releases.
    """

    def __init__(self, conf=None, driver=None):
        self.driver = (driver if driver is not None
                       else allocator.get_allocator(conf))
        self.confirm_failures = collections.Counter()
        self.release_failures = collections.Counter()
        store = self.driver.single_host_store
        if store is not None:
            LOG.warning("The %s driver keeps its state in %s, which serves "
                        "the engines of this host only: if Murano engines "
                        "run on several hosts, they can hand out the same "
                        "CIDR; set %s to one they all reach.",
                        self.driver.name, store,
                        self.driver.shared_store_option)

    def get_available_cidr(self, client, router_id, net_id, ip_version=4):
        """Allocate the CIDR of a new environment network.

        The drop-in for ``NetworkExplorer.get_available_cidr``: the router is
        the scope, so two networks on one router never get overlapping
        CIDRs from a driver that prevents collisions, and the router's
        current subnets are never handed out by any driver.

        :param client: the engine's Neutron client.
        :param router_id: the router the network will be plugged into, or
            None (no taken CIDRs and no scope, as in Murano).
        :param net_id: the network's id in Murano (the owner).
        :param ip_version: 4 or 6.
        :returns: the CIDR, as a string such as ``"10.0.3.0/24"``.
        :raises murano_cidr.exceptions.PoolExhausted: if nothing is free
            (where Murano returned None).
        :raises murano_cidr.exceptions.InvalidArgument: for a bad id or IP
            version.
        :raises murano_cidr.exceptions.BackendUnavailable: if Neutron, the
            database or the lock service cannot be used; nothing is
            allocated.
        """
        scope = router_id or None
        taken = neutron.RouterReader(client, scope)
        if scope is not None and self.driver.has(
                capabilities.Capability.PREVENTS_COLLISIONS):
            # NOTE: read once before the driver's lock or row lock, so that
            # under it only the router's ports are listed again (the CIDRs
            # of the subnets already read are remembered).
            allocation.validate_owner(net_id)
            self.driver.pool(ip_version)
            taken()
        cidr = self.driver.allocate(net_id, scope=scope, taken=taken,
                                    ip_version=ip_version)
        LOG.info("Allocated %s to network %s on router %s", cidr, net_id,
                 scope)
        return cidr

    def confirm_cidr(self, net_id):
        """Say that the network's subnet now exists in Neutron; never raises.

        Call it after the Heat stack push that created the subnet and its
        router interface: the router is the record from then on (see
        :meth:`murano_cidr.engine.drivers.base.AllocatorDriver.confirm`). A
        driver that could not confirm (a reservation lost first, an unreachable
        database) does not fail a deployment that worked: it is logged (a
        lost reservation as an error: its CIDR may have been another
        network's) and counted (:attr:`confirm_failures`).

        :param net_id: the network's id, as given to
            :meth:`get_available_cidr`.
        :returns: True if the driver confirmed it, False if it failed.
        """
        try:
            self.driver.confirm(net_id)
        except Exception as e:
            self.confirm_failures[type(e).__name__] += 1
            # NOTE: a library error is one line; anything else is a bug of
            # a driver, whose traceback is worth the log.
            log = LOG.error if isinstance(
                e, exceptions.ReservationLost) else LOG.warning
            log("Could not confirm the CIDR of network %s (%s: %s); its "
                "subnet is on the router, which keeps the CIDR from being "
                "handed out again, so the deployment goes on (%d "
                "confirmations failed in this process)", net_id,
                type(e).__name__, e, sum(self.confirm_failures.values()),
                exc_info=not isinstance(e, exceptions.MuranoCidrException))
            return False
        return True

    def release_cidr(self, net_id):
        """Free the network's CIDR once the network is deleted.

        A release that fails is logged as an error naming what reclaims the
        allocation, counted (:attr:`release_failures`), and raised: Murano's
        DSL mutes an exception of ``.destroy`` ("Muted exception during
        execution of .destroy") and deletes the environment anyway, so the
        allocation stays until ``murano-cidr reconcile`` or ``murano-cidr
        prune --murano-db`` releases it.

        :param net_id: the network's id, as given to
            :meth:`get_available_cidr`.
        :returns: True if the driver held a CIDR for it; False otherwise
            (always False for drivers that keep no state). Not an error.
        :raises murano_cidr.exceptions.BackendUnavailable: if the driver's
            store cannot be reached.
        """
        try:
            released = self.driver.release(net_id)
        except Exception as e:
            self.release_failures[type(e).__name__] += 1
            LOG.error("Could not release the CIDR of network %s (%s: %s): "
                      "its allocation stays, keeping the CIDR out of the "
                      "pool, until 'murano-cidr reconcile' (once its subnet "
                      "is off the router) or 'murano-cidr prune "
                      "--murano-db' (once the network is no object of "
                      "Murano's database) releases it (%d releases failed "
                      "in this process)", net_id, type(e).__name__, e,
                      sum(self.release_failures.values()))
            raise
        if released:
            LOG.info("Released the CIDR of network %s", net_id)
        return released

    def close(self):
        """Release the driver's connections and locks."""
        self.driver.close()


_shared = None
#: The process that built :data:`_shared`.
_shared_pid = None
_shared_guard = threading.Lock()
#: Allocators a forked child inherited: kept, never closed nor collected,
#: since their connections, sockets and locks are its parent's.
_inherited = []


def shared_allocator(conf=None):
    """Return the process-wide allocator, built on first use.

    The engine builds one allocator per process (a database engine or a
    lock service connection is not something to open per deployment).

    :param conf: the configuration to build it from on first use; the
        global :data:`oslo_config.cfg.CONF` if None. Ignored afterwards.
    :returns: a :class:`NetworkCidrAllocator`.
    :raises murano_cidr.exceptions.DriverNotFound: if the configured driver
        is not installed.
    :raises murano_cidr.exceptions.InvalidConfig: if an option is invalid.
    """
    global _shared, _shared_pid
    with _shared_guard:
        if _shared is None:
            _shared = NetworkCidrAllocator(cfg.CONF if conf is None else conf)
            _shared_pid = os.getpid()
        return _shared


def reset_shared_allocator():
    """Forget the process-wide allocator; close it if this process built it.

    The next call builds a new one from the configuration as it is then.
    In a forked child (the allocator was built by its parent) it is
    dropped without being closed: its database connections, lock service
    sessions and reservations are the parent's, which still uses them
    (closing a libpq connection ends the server session; releasing a
    reservation deletes the parent's lock). They stay referenced, so not
    even the garbage collector closes them. A fork does this by itself
    (:func:`forget_inherited_allocator` runs in every child); calling it
    again in the child is harmless.
    """
    global _shared
    with _shared_guard:
        if _shared is not None and _shared_pid == os.getpid():
            _shared.close()
        elif _shared is not None:
            _inherited.append(_shared)
        _shared = None


def forget_inherited_allocator():
    """Drop, in a forked child, the allocator the parent built; close nothing.

    Registered with :func:`os.register_at_fork` to run in every child
    process (an engine worker forked after the allocator was built), so a
    child builds its own allocator on first use and never touches its
    parent's connections, sessions or reservations.
    """
    global _shared, _shared_guard
    # NOTE: a thread of the parent may have held the guard at the fork;
    # the child's copy would stay locked.
    _shared_guard = threading.Lock()
    if _shared is not None:
        _inherited.append(_shared)
    _shared = None


os.register_at_fork(after_in_child=forget_inherited_allocator)


def get_available_cidr(client, router_id, net_id, ip_version=4):
    """Allocate a CIDR with the process-wide allocator.

    See :meth:`NetworkCidrAllocator.get_available_cidr`.
    """
    return shared_allocator().get_available_cidr(
        client, router_id, net_id, ip_version=ip_version)


def confirm_cidr(net_id):
    """Confirm a CIDR with the process-wide allocator; never raises.

    See :meth:`NetworkCidrAllocator.confirm_cidr`.
    """
    try:
        shared = shared_allocator()
    except Exception as e:
        LOG.warning("Could not confirm the CIDR of network %s (%s: %s); its "
                    "subnet is on the router, so the deployment goes on",
                    net_id, type(e).__name__, e)
        return False
    return shared.confirm_cidr(net_id)


def release_cidr(net_id):
    """Release a CIDR with the process-wide allocator.

    See :meth:`NetworkCidrAllocator.release_cidr`.
    """
    return shared_allocator().release_cidr(net_id)
