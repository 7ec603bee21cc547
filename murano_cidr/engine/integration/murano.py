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

"""What Murano's ``NetworkExplorer`` runs instead of picking CIDRs itself.

:class:`ExplorerMethods` call the process-wide :class:`NetworkCidrAllocator`
(doc/source/integration/murano.rst, "What the adapter does"), which reads
the router's subnets with the engine's Neutron client (:class:`RouterReader`:
the router's ports, ``list_ports(device_id=...)``, then the CIDRs of their
subnets only, ``list_subnets(id=[...])``). Every error of the client
becomes :class:`~murano_cidr.exceptions.BackendUnavailable`.
"""

import collections
import os
import threading

from oslo_config import cfg
from oslo_log import log as logging

from murano_cidr.engine import allocator
from murano_cidr.engine.drivers import capabilities
from murano_cidr import exceptions

LOG = logging.getLogger(__name__)


class NetworkCidrAllocator(object):
    """The allocator as the Murano engine uses it.

    :param conf: the configuration to read; the global one if None.
    :param driver: a driver built already, instead of ``conf``'s.
    :raises murano_cidr.exceptions.DriverNotFound: if the configured driver
        is not installed.
    :raises murano_cidr.exceptions.InvalidConfig: if an option is invalid.
    :ivar confirm_failures: a :class:`collections.Counter` of the failed
        confirmations, by error class name.
    :ivar release_failures: the same, of the releases.
    """

    def __init__(self, conf=None, driver=None):
        self.driver = (driver if driver is not None
                       else allocator.get_allocator(conf))
        self.confirm_failures = collections.Counter()
        self.release_failures = collections.Counter()
        self._read_first = self.driver.has(
            capabilities.Capability.PREVENTS_COLLISIONS)
        store = self.driver.single_host_store
        if store is not None:
            LOG.warning("The %s driver keeps its state in %s, which serves "
                        "the engines of this host only: if Murano engines "
                        "run on several hosts, they can hand out the same "
                        "CIDR; set %s to one they all reach.",
                        self.driver.name, store,
                        self.driver.shared_store_option)

    def get_available_cidr(self, client, router_id, net_id, ip_version=4):
        """Allocate the CIDR of a new network; the router's subnets are taken.

        :param client: the engine's Neutron client.
        :param router_id: the scope, or None (no scope, nothing taken).
        :param net_id: the owner.
        :returns: the CIDR, as a string such as ``"10.0.3.0/24"``.
        :raises murano_cidr.exceptions.PoolExhausted: if nothing is free.
        :raises murano_cidr.exceptions.InvalidArgument: for a bad id or IP
            version.
        :raises murano_cidr.exceptions.BackendUnavailable: if Neutron, the
            database or the lock service fails; nothing is allocated.
        """
        scope = router_id or None
        # NOTE: read before the driver's lock, so that under it only the
        # router's ports are listed again.
        taken = RouterReader(client, scope, read_now=self._read_first)
        cidr = self.driver.allocate(net_id, scope=scope, taken=taken,
                                    ip_version=ip_version)
        LOG.info("Allocated %s to network %s on router %s", cidr, net_id,
                 scope)
        return cidr

    def confirm_cidr(self, net_id):
        """Say that the network's subnet exists; never raises.

        :returns: True if the driver confirmed it; False if it failed
            (logged and counted: the router is the record).
        """
        try:
            self.driver.confirm(net_id)
        except Exception as e:
            self.confirm_failures[type(e).__name__] += 1
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

        :returns: True if the driver held a CIDR for it, else False.
        :raises murano_cidr.exceptions.BackendUnavailable: if the store
            cannot be reached (logged and counted first).
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
_shared_pid = None
_shared_guard = threading.Lock()
#: Allocators a forked child inherited: never closed nor collected, since
#: their connections, sockets and locks are its parent's.
_inherited = []


def shared_allocator(conf=None):
    """Return the process-wide allocator, built on first use.

    :param conf: the configuration to build it from (once); global if None.
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
    """Forget the process-wide allocator; close it if this process built it."""
    global _shared
    with _shared_guard:
        if _shared is not None and _shared_pid == os.getpid():
            _shared.close()
        elif _shared is not None:
            _inherited.append(_shared)
        _shared = None


def forget_inherited_allocator():
    """Drop, in a forked child, the parent's allocator; close nothing."""
    global _shared, _shared_guard
    # NOTE: a thread of the parent may have held the guard at the fork.
    _shared_guard = threading.Lock()
    if _shared is not None:
        _inherited.append(_shared)
    _shared = None


os.register_at_fork(after_in_child=forget_inherited_allocator)


def get_available_cidr(client, router_id, net_id, ip_version=4):
    """:meth:`NetworkCidrAllocator.get_available_cidr`, process-wide."""
    return shared_allocator().get_available_cidr(
        client, router_id, net_id, ip_version=ip_version)


def confirm_cidr(net_id):
    """:meth:`NetworkCidrAllocator.confirm_cidr`, process-wide; no raise."""
    try:
        shared = shared_allocator()
    except Exception as e:
        LOG.warning("Could not confirm the CIDR of network %s (%s: %s); its "
                    "subnet is on the router, so the deployment goes on",
                    net_id, type(e).__name__, e)
        return False
    return shared.confirm_cidr(net_id)


def release_cidr(net_id):
    """:meth:`NetworkCidrAllocator.release_cidr`, process-wide."""
    return shared_allocator().release_cidr(net_id)


class ExplorerMethods(object):
    """What the plugin sets on Murano's ``NetworkExplorer``, as Murano's.

    ``self._client`` is the explorer's Neutron client property.
    """

    def get_available_cidr(self, router_id, net_id, ip_version=4):
        """Allocate the CIDR with murano-cidr's configured driver."""
        return get_available_cidr(self._client, router_id, net_id,
                                  ip_version=ip_version)

    def confirm_cidr(self, net_id):
        """The network's subnet exists: settle the allocation; never raises."""
        confirm_cidr(net_id)

    def release_cidr(self, net_id):
        """The network is being deleted: its CIDR may be reused."""
        return release_cidr(net_id)


#: Subnet ids per ``list_subnets`` request: 40 characters each, under the
#: 8 KiB request line of python-neutronclient and Neutron's server.
IDS_PER_REQUEST = 100


class RouterReader(object):
    """The CIDRs on one router, read again at every call.

    Subnets already read, or that the client cannot see, are not asked for
    again (murano.rst, "What the adapter does").

    :param client: a python-neutronclient ``Client``.
    :param router_id: the router's id; None or empty for none.
    :param read_now: read the router once now, as a call would.
    :raises murano_cidr.exceptions.BackendUnavailable: if ``read_now``
        and Neutron fails.
    """

    def __init__(self, client, router_id, read_now=False):
        self.client = client
        self.router_id = router_id
        self._cidrs = {}
        self._unseen = set()
        if read_now:
            self()

    def __call__(self):
        """Return the CIDRs on the router now, by subnet id.

        :raises murano_cidr.exceptions.BackendUnavailable: if a Neutron call
            raises or answers something that is not a listing.
        """
        if not self.router_id:
            return []
        subnet_ids = router_subnet_ids(self.client, self.router_id)
        unknown = subnet_ids - self._unseen - set(self._cidrs)
        if unknown:
            seen = subnet_cidrs(self.client, self.router_id, sorted(unknown))
            self._cidrs.update(seen)
            self._unseen |= unknown - set(seen)
        return [self._cidrs[s] for s in sorted(subnet_ids)
                if s in self._cidrs]


def router_subnet_ids(client, router_id):
    """Return the ids of the subnets on the ports of a router.

    :raises murano_cidr.exceptions.BackendUnavailable: if Neutron fails.
    """
    ports = call_neutron(client.list_ports, router_id, device_id=router_id)
    try:
        return {fixed_ip["subnet_id"]
                for port in ports["ports"]
                for fixed_ip in port["fixed_ips"]}
    except (KeyError, TypeError) as e:
        raise _malformed(router_id, e)


def subnet_cidrs(client, router_id, subnet_ids):
    """Return ``{subnet id: cidr}`` of those subnets the client can see.

    Asked :data:`IDS_PER_REQUEST` ids at a time; others answered are
    ignored.

    :param subnet_ids: a non-empty sequence of subnet ids.
    :raises murano_cidr.exceptions.BackendUnavailable: if Neutron fails.
    """
    subnet_ids = list(subnet_ids)
    wanted = set(subnet_ids)
    found = {}
    for start in range(0, len(subnet_ids), IDS_PER_REQUEST):
        subnets = call_neutron(
            client.list_subnets, router_id,
            id=subnet_ids[start:start + IDS_PER_REQUEST])
        try:
            found.update((subnet["id"], subnet["cidr"])
                         for subnet in subnets["subnets"]
                         if subnet["id"] in wanted)
        except (KeyError, TypeError) as e:
            raise _malformed(router_id, e)
    return found


def call_neutron(method, router_id, **kwargs):
    """Call a Neutron client method; any error becomes BackendUnavailable.

    :raises murano_cidr.exceptions.BackendUnavailable: naming the call and
        the router, with the client's exception as its ``__cause__``.
    """
    try:
        return method(**kwargs)
    except Exception as e:
        raise exceptions.BackendUnavailable(
            backend="Neutron",
            reason="%s failed while reading the subnets of router %s: "
            "%s: %s" % (getattr(method, "__name__", "a call"), router_id,
                        type(e).__name__, e)) from e


def _malformed(router_id, error):
    return exceptions.BackendUnavailable(
        backend="Neutron",
        reason="unexpected answer while reading the subnets of router %s "
        "(missing or malformed %s)" % (router_id, error))
