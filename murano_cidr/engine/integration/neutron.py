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

"""Reading a router's subnets with the engine's Neutron client.

The router's ports (``list_ports(device_id=...)``), then the CIDRs of their
subnets only (``list_subnets(id=[...])``). Every error of the client
becomes :class:`~murano_cidr.exceptions.BackendUnavailable`.
"""

from oslo_log import log as logging

from murano_cidr import exceptions

LOG = logging.getLogger(__name__)

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
