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

"""Release allocations whose CIDR is on their router no more.

Deleting a Murano environment deletes its Heat stack, and with it the
subnet and its router interface; an allocation nobody released then names a
CIDR its router does not carry. Reconciling compares each allocation with a
listing of the routers' subnets (from Neutron, see
:func:`murano_cidr.operator.operations.openstack_export.read_router_listing`
and :func:`router_listing`, with a Neutron client) and releases, after
the grace period, those whose CIDR is on their router no more.

It needs no owner ids and no change to the engine, and is as conservative as
pruning (:mod:`murano_cidr.operator.operations.pruning`): nothing is released
unless asked; an allocation is kept when its router is not in the listing, when
the listing of its router is incomplete (a subnet the lister could not
see), when it has no scope, when any subnet of its router overlaps it, and
while it is younger than the grace period (its subnet may not exist yet:
the engine allocates before Heat creates it).

Only the allocation's own router is compared: the same CIDR on another
router is another network, since overlaps across routers are allowed.

Released CIDRs that a driver still holds back
(:meth:`~murano_cidr.engine.drivers.base.AllocatorDriver.list_released`: the
``db`` driver keeps them until their subnet has left the router) are
planned the same way, their age counted from their release and compared
with the longer of the grace period and the driver's own
(``[cidr_allocator] release_grace``), and applying frees them
(:func:`apply`): the listing, taken with an account that sees every
project, shows their subnet gone.
"""

import dataclasses
import datetime

from murano_cidr.engine.integration import murano
from murano_cidr.engine import taken as taken_mod
from murano_cidr.operator.operations import pruning

#: Codes of a reconciling decision (see :class:`pruning.Decision`).
ON_ROUTER = "on-router"
NOT_ON_ROUTER = "not-on-router"
NO_SCOPE = "no-scope"
ROUTER_NOT_LISTED = "router-not-listed"
ROUTER_INCOMPLETE = "router-incomplete"


@dataclasses.dataclass
class RouterListing(object):
    """The subnets on each router, as Neutron showed them.

    :ivar cidrs: a dictionary from router id to the list of CIDR strings of
        the subnets on that router's ports.
    :ivar incomplete: a dictionary from router id to why its list is not
        known to be whole (a port on a subnet the listing does not show).
    """

    cidrs: dict = dataclasses.field(default_factory=dict)
    incomplete: dict = dataclasses.field(default_factory=dict)

    def add(self, router, cidrs=(), missing=()):
        """Record what a router carries.

        :param router: the router id.
        :param cidrs: the CIDR strings of its subnets.
        :param missing: ids of subnets on its ports whose CIDR is unknown.
        """
        self.cidrs.setdefault(router, []).extend(cidrs)
        if missing:
            self.incomplete[router] = (
                "its ports are on %d subnet(s) the listing does not show "
                "(%s); list them with an account that sees every project"
                % (len(missing), ", ".join(sorted(missing)[:3])))


def router_listing(client, router_ids):
    """Read what each router carries, for reconciling.

    Unlike :class:`murano_cidr.engine.integration.murano.RouterReader` (the
    engine's reading), a subnet on a router's port that the client cannot
    see is not left out silently: that router's listing is marked
    incomplete, so nothing of its scope is released. Use a client with the
    admin role to see every project's subnets.

    :param client: a python-neutronclient ``Client``.
    :param router_ids: the routers to read (the scopes of the allocations).
    :returns: a :class:`RouterListing`.
    :raises murano_cidr.exceptions.BackendUnavailable: if a Neutron client
        call raises or answers something that is not a listing.
    """
    listing = RouterListing()
    for router_id in sorted(set(router_ids)):
        subnet_ids = murano.router_subnet_ids(client, router_id)
        seen = {}
        if subnet_ids:
            seen = murano.subnet_cidrs(client, router_id,
                                       sorted(subnet_ids))
        listing.add(router_id,
                    [seen[s] for s in sorted(subnet_ids) if s in seen],
                    missing=subnet_ids - set(seen))
    return listing


def _overlapping(allocation, cidrs):
    wanted = taken_mod.parse_cidr(allocation.cidr)
    for cidr in cidrs:
        net = taken_mod.parse_cidr(cidr)
        if (net.version == wanted.version and net.first <= wanted.last
                and wanted.first <= net.last):
            return str(net)
    return None


def _aged(allocation, grace, release_grace, now):
    if allocation.released_at is None:
        return pruning.aged(allocation, grace, now, NOT_ON_ROUTER,
                            "its router carries no subnet overlapping it")
    # A released CIDR waits for the driver's grace period too: the
    # listing may miss a subnet an engine is about to plug.
    grace = max(grace, release_grace)
    age = now - pruning.as_utc(allocation.released_at)
    if age < grace:
        return pruning.Decision(
            allocation, pruning.KEEP, "released %s ago, within the grace "
            "period of %s" % (pruning.format_duration(age),
                              pruning.format_duration(grace)),
            pruning.IN_GRACE)
    return pruning.Decision(
        allocation, pruning.RELEASE, "released %s ago; its router carries "
        "no subnet overlapping it any more" % pruning.format_duration(age),
        NOT_ON_ROUTER)


def plan(allocations, listing, grace=pruning.DEFAULT_GRACE, now=None,
         release_grace=datetime.timedelta(0)):
    """Decide which allocations to release.

    :param allocations: the driver's live allocations, and the released
        ones it holds back (``released_at`` set), which are freed.
    :param listing: a :class:`RouterListing`.
    :param grace: a :class:`datetime.timedelta`; younger allocations are
        kept whatever their router shows.
    :param release_grace: the driver's own grace period for released
        CIDRs (its ``release_grace``, see
        :class:`~murano_cidr.engine.drivers.base.AllocatorDriver`); a released
        CIDR is kept until the longer of it and ``grace`` has passed since
        its release.
    :param now: the current time (UTC); now if None.
    :returns: a list of
        :class:`~murano_cidr.operator.operations.pruning.Decision`, in the
        order given, with this module's codes.
    :raises murano_cidr.exceptions.InvalidArgument: for a negative grace
        period, or a CIDR in the listing that cannot be parsed.
    """
    pruning.check_grace(grace)
    now = pruning.as_utc(now or pruning.utcnow())
    decisions = []
    for a in allocations:
        if a.scope is None:
            decisions.append(pruning.Decision(
                a, pruning.KEEP, "no router to compare it with", NO_SCOPE))
        elif a.scope not in listing.cidrs:
            decisions.append(pruning.Decision(
                a, pruning.KEEP, "its router is not in the listing",
                ROUTER_NOT_LISTED))
        elif a.scope in listing.incomplete:
            decisions.append(pruning.Decision(
                a, pruning.KEEP, "the listing of its router is incomplete: "
                "%s" % listing.incomplete[a.scope], ROUTER_INCOMPLETE))
        else:
            found = _overlapping(a, listing.cidrs[a.scope])
            if found is not None:
                decisions.append(pruning.Decision(
                    a, pruning.KEEP, "its router carries %s" % found,
                    ON_ROUTER))
            else:
                decisions.append(_aged(a, grace, release_grace, now))
    return decisions


def apply(driver, decisions):
    """Release the live allocations a plan says to, free the released ones.

    Live ones go through :func:`murano_cidr.operator.operations.pruning.apply`,
    then their CIDR is freed at once (the listing shows it off its
    router); a released one is freed with
    :meth:`~murano_cidr.engine.drivers.base.AllocatorDriver.free_released`,
    unless it was freed (or released anew) since the plan.

    :param driver: the driver the plan was made from.
    :param decisions: a plan from :func:`plan`.
    :returns: ``decisions``, their actions updated.
    :raises murano_cidr.exceptions.BackendUnavailable: if the driver's store
        fails; what was done before stays done.
    """
    live = pruning.apply(driver, [d for d in decisions
                                  if d.allocation.released_at is None])
    done = {(d.allocation.scope, d.allocation.cidr, d.allocation.owner)
            for d in live if d.action == pruning.RELEASED}
    for scope in sorted({key[0] for key in done}):
        for held in driver.list_released(scope=scope):
            if (held.scope, held.cidr, held.owner) in done:
                driver.free_released(held)
    for decision in decisions:
        if (decision.allocation.released_at is None
                or decision.action != pruning.RELEASE):
            continue
        if driver.free_released(decision.allocation):
            decision.action = pruning.RELEASED
        else:
            decision.action = pruning.SKIPPED
            decision.reason = "freed or changed since it was read"
            decision.code = pruning.CHANGED
    return decisions
