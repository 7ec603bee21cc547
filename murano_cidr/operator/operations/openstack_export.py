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

"""Build an import file from the ``openstack`` client's JSON output.

The CIDRs a cloud already uses are the subnets plugged into its routers.
The ``openstack`` client lists them in two steps, and this module joins
them::

    openstack subnet list -f json > subnets.json
    mkdir ports
    for router in $(openstack router list -f value -c ID); do
        openstack port list --router "$router" -f json > "ports/$router.json"
    done
    murano-cidr --config-file murano.conf convert-openstack \\
        --subnets subnets.json --ports-dir ports > existing.json

Each row of the result is ``{"scope": router id, "cidr": subnet CIDR,
"owner": network id}``. Subnets outside the configured pools (external
networks, networks users created by hand) are left out: they can never
collide with an allocation.
"""

import dataclasses
import json
import os
import re

from oslo_log import log as logging

from murano_cidr.engine import pool_cidrs
from murano_cidr import exceptions
from murano_cidr.operator import errors
from murano_cidr.operator.operations import files
from murano_cidr.operator.operations import reconciling

LOG = logging.getLogger(__name__)

#: The ``Fixed IP Addresses`` cell of older clients, as text.
_SUBNET_ID = re.compile(r"subnet_id='([^']+)'")


@dataclasses.dataclass
class Conversion(object):
    """The rows built, and what was left out and why.

    :ivar rows: dictionaries with ``scope``, ``cidr`` and ``owner``.
    :ivar skipped: ``(router, subnet, reason)`` tuples.
    """

    rows: list = dataclasses.field(default_factory=list)
    skipped: list = dataclasses.field(default_factory=list)


def _first(record, *keys):
    for key in keys:
        if key in record:
            return record[key]
    return None


def _read_listing(path, key, command, text=None):
    """Return the JSON list a client command printed, or the API's ``key``.

    :param text: the file's text, if already read.
    :raises murano_cidr.operator.errors.InvalidInputFile: if it is not a list.
    """
    if text is None:
        text = files.read_text(path)
    data = files.parse_json(path, text)
    if isinstance(data, dict) and key in data:
        data = data[key]
    if not isinstance(data, list):
        raise errors.InvalidInputFile(
            path=path, reason="expected the JSON list of '%s'" % command)
    return data


def read_subnets(path, check_cidrs=False):
    """Read ``openstack subnet list -f json`` (or the API's subnets).

    :param check_cidrs: refuse the file if a subnet's CIDR is not one
        (naming its line and id); otherwise the caller decides.

    :returns: a dictionary from subnet id to ``(network id, CIDR)``.
    :raises murano_cidr.operator.errors.InvalidInputFile: if the file is not
        such a listing.
    """
    text = files.read_text(path)
    data = _read_listing(path, "subnets", "openstack subnet list -f json",
                         text)
    subnets = {}
    for number, item in enumerate(data, 1):
        if not isinstance(item, dict):
            item = {}
        subnet_id = _first(item, "ID", "id")
        network_id = _first(item, "Network", "network_id")
        cidr = _first(item, "Subnet", "cidr")
        if not all(isinstance(v, str) and v
                   for v in (subnet_id, network_id, cidr)):
            raise errors.InvalidInputFile(
                path=path, reason="item %d: expected ID, Network and "
                "Subnet, as 'openstack subnet list -f json' prints" % number)
        try:
            if check_cidrs:
                pool_cidrs.network(cidr, "Subnet")
        except exceptions.InvalidCidr as e:
            at = text.find(json.dumps(subnet_id))
            raise errors.InvalidInputFile(
                path=path, reason="%ssubnet %s (item %d): its CIDR %r: %s; "
                "take the listing again with 'openstack subnet list -f json'"
                % ("line %d: " % (text.count("\n", 0, at) + 1)
                   if at >= 0 else "", subnet_id, number, cidr,
                   e.kwargs["reason"]))
        subnets[subnet_id] = (network_id, cidr)
    return subnets


def _port_subnet_ids(path, number, port):
    fixed = _first(port, "Fixed IP Addresses", "fixed_ips")
    if isinstance(fixed, str):
        return _SUBNET_ID.findall(fixed)
    if isinstance(fixed, list):
        return [ip["subnet_id"] for ip in fixed
                if isinstance(ip, dict) and "subnet_id" in ip]
    raise errors.InvalidInputFile(
        path=path, reason="item %d: no 'Fixed IP Addresses', as "
        "'openstack port list -f json' prints" % number)


def read_router_ports(path):
    """Read ``openstack port list --router R -f json``.

    :returns: the ids of the subnets the router's ports are on.
    :raises murano_cidr.operator.errors.InvalidInputFile: if the file is not
        such a listing.
    """
    data = _read_listing(path, "ports",
                         "openstack port list --router <id> -f json")
    subnet_ids = []
    for number, port in enumerate(data, 1):
        if not isinstance(port, dict):
            port = {}
        subnet_ids.extend(_port_subnet_ids(path, number, port))
    return subnet_ids


def _router_files(ports_dir):
    """Return ``(router id, path)`` of each ``<router id>.json``."""
    try:
        names = sorted(n for n in os.listdir(ports_dir)
                       if n.endswith(".json"))
    except OSError as e:
        raise errors.InvalidInputFile(
            path=ports_dir, reason="cannot be listed: %s"
            % (e.strerror or e))
    return [(n[:-len(".json")], os.path.join(ports_dir, n)) for n in names]


def read_router_listing(subnets_path, ports_dir):
    """Read what each router carries, for reconciling.

    The same files as :func:`convert`. A router is listed when its
    ``<router id>.json`` is in ``ports_dir``; a router whose ports are on a
    subnet ``subnets_path`` does not show is marked incomplete, since that
    subnet's CIDR is unknown.

    :param subnets_path: the output of ``openstack subnet list -f json``.
    :param ports_dir: a directory of ``<router id>.json`` files, each the
        output of ``openstack port list --router <router id> -f json``.
    :returns: a
        :class:`~murano_cidr.operator.operations.reconciling.RouterListing`.
    :raises murano_cidr.operator.errors.InvalidInputFile: for an unreadable or
        malformed file.
    """
    subnets = read_subnets(subnets_path, check_cidrs=True)
    listing = reconciling.RouterListing()
    for router, path in _router_files(ports_dir):
        ids = set(read_router_ports(path))
        listing.add(router, [subnets[i][1] for i in sorted(ids)
                             if i in subnets],
                    missing=ids - set(subnets))
    return listing


def convert(subnets_path, ports_dir, pools):
    """Join subnets and router ports into import rows.

    :param subnets_path: the output of ``openstack subnet list -f json``.
    :param ports_dir: a directory of ``<router id>.json`` files, each the
        output of ``openstack port list --router <router id> -f json``.
    :param pools: a dictionary from IP version to
        :class:`~murano_cidr.engine.pool.Pool`; subnets outside them are left
        out.
    :returns: a :class:`Conversion`.
    :raises murano_cidr.operator.errors.InvalidInputFile: for an unreadable or
        malformed file.
    """
    subnets = read_subnets(subnets_path)
    result = Conversion()
    owners = {}
    for router, path in _router_files(ports_dir):
        for subnet_id in sorted(set(read_router_ports(path))):
            if subnet_id not in subnets:
                result.skipped.append((router, subnet_id, "not in %s (another "
                                       "project's subnet?)" % subnets_path))
                continue
            network_id, cidr = subnets[subnet_id]
            try:
                net = pool_cidrs.network(cidr, "Subnet")
            except exceptions.InvalidCidr as e:
                result.skipped.append((router, subnet_id, str(e)))
                continue
            pool = pools.get(net.version)
            if pool is None or not pool.contains(net):
                result.skipped.append((router, subnet_id, "%s is outside "
                                       "the pools" % net))
                continue
            if network_id in owners:
                result.skipped.append((
                    router, subnet_id, "network %s already holds %s; one "
                    "CIDR per network is recorded (the router still "
                    "protects this one)" % (network_id, owners[network_id])))
                continue
            owners[network_id] = str(net.cidr)
            result.rows.append({"scope": router, "cidr": str(net.cidr),
                                "owner": network_id})
    return result
