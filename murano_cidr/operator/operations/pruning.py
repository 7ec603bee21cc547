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

"""Release allocations whose owner no longer exists.

An allocation leaks when its network was deleted but nobody called
``release`` (an engine crashed, an environment was removed by hand). Pruning
compares a driver's allocations with the *live owners* (the owner ids still
in use: for Murano, MuranoPL object ids, read from its database by
:mod:`murano_cidr.operator.operations.murano_db`, or a file of ids) and
releases the others, conservatively, like the reconcilers operators trust:

* nothing is released unless asked (:func:`plan` only says what would be);
* an allocation younger than the grace period is kept: its network may
  simply be newer than the live owners file;
* an allocation whose age is unknown is kept;
* a live owners file that lists nobody is refused, since it would release
  everything, and so is a plan that releases more than a share of the
  allocations (:func:`check_share`), unless that share is allowed.

The live owners file is JSON (a list of ids, a list of objects with an
``id``/``ID`` key as ``openstack network list -f json`` prints, or Neutron's
``{"networks": [...]}``), CSV with an ``id`` column, or text with one id per
line (``openstack network list -f value -c ID``).
"""

import dataclasses
import datetime
import re

from oslo_log import log as logging

from murano_cidr.engine import allocation as allocation_mod
from murano_cidr import exceptions
from murano_cidr.operator import errors
from murano_cidr.operator.operations import files

LOG = logging.getLogger(__name__)

#: The default grace period: a day, far longer than any deployment takes
#: between allocating a CIDR and creating its network.
DEFAULT_GRACE = datetime.timedelta(days=1)

RELEASE = "release"
KEEP = "keep"
RELEASED = "released"
SKIPPED = "skipped"

#: Why a decision was taken, for programs (``reason`` is for people).
OWNER_LIVE = "owner-live"
AGE_UNKNOWN = "age-unknown"
IN_GRACE = "in-grace"
OWNER_GONE = "owner-gone"
CHANGED = "changed"
ALREADY_RELEASED = "already-released"

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_DURATION = re.compile(r"^\s*(\d+)\s*([smhdw]?)\s*$", re.IGNORECASE)


def parse_duration(text):
    """Parse a duration such as ``3600``, ``90m``, ``24h`` or ``7d``.

    :param text: a whole number of seconds, or of the unit its suffix
        names (``s``, ``m``, ``h``, ``d``, ``w``).
    :returns: a :class:`datetime.timedelta`.
    :raises murano_cidr.exceptions.InvalidArgument: for anything else.
    """
    match = _DURATION.match(text or "")
    if not match:
        raise exceptions.InvalidArgument(
            name="duration", value=text,
            reason="expected a number of seconds or a number with a unit: "
            "s, m, h, d or w (e.g. 24h)")
    seconds = int(match.group(1)) * _UNITS[(match.group(2) or "s").lower()]
    try:
        return datetime.timedelta(seconds=seconds)
    except OverflowError:
        raise exceptions.InvalidArgument(
            name="duration", value=text,
            reason="is longer than the longest duration accepted, %dd"
            % datetime.timedelta.max.days)


def format_duration(delta):
    """Return a short human form of a duration, such as ``2d3h``."""
    seconds = int(delta.total_seconds())
    if seconds < 0:
        return "-" + format_duration(-delta)
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            parts.append("%d%s" % (seconds // size, unit))
            seconds %= size
    if seconds or not parts:
        parts.append("%ds" % seconds)
    return "".join(parts[:2])


def _ids_from_json(path, data):
    if isinstance(data, dict):
        for key in ("networks", "owners"):
            if key in data:
                data = data[key]
                break
    if not isinstance(data, list):
        raise errors.InvalidInputFile(
            path=path, reason="expected a JSON list of owner ids or of "
            "objects with an id, got %s" % type(data).__name__)
    for number, item in enumerate(data, 1):
        if isinstance(item, dict):
            item = item.get("id", item.get("ID"))
        yield "item %d" % number, item


def _ids_from_text(text):
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if line and not line.startswith("#"):
            yield "line %d" % number, line


def read_live_owners(path, fmt=None):
    """Read the owners that still exist.

    :param path: the file, or ``-`` for standard input.
    :param fmt: ``"json"``, ``"csv"`` or ``"text"``; None guesses from the
        name and content.
    :returns: a frozenset of owner ids.
    :raises murano_cidr.operator.errors.InvalidInputFile: if the file cannot be
        read or parsed, holds an invalid id, or lists nobody.
    """
    text = files.read_text(path)
    if fmt is None:
        fmt = files.detect_format(path, text)
        if fmt == files.CSV and not path.lower().endswith(".csv"):
            # NOTE: without a suffix, anything but JSON is one id per line,
            # the output of 'openstack network list -f value -c ID'.
            fmt = "text"
    if fmt == files.JSON:
        entries = _ids_from_json(path, files.parse_json(path, text))
    elif fmt == files.CSV:
        rows = files.parse_csv(path, text)
        if rows and "id" not in rows[0][1]:
            raise errors.InvalidInputFile(
                path=path, reason="the CSV header has no 'id' column")
        entries = (("line %d" % n, row["id"]) for n, row in rows)
    else:
        entries = _ids_from_text(text)
    owners = set()
    for where, value in entries:
        try:
            owners.add(allocation_mod.validate_owner(value))
        except exceptions.InvalidArgument as e:
            raise errors.InvalidInputFile(
                path=path, reason="%s: %s" % (where, e))
    if not owners:
        raise errors.InvalidInputFile(
            path=path, reason="lists no live owner; pruning against it "
            "would release every allocation, so it is refused")
    return frozenset(owners)


@dataclasses.dataclass
class Decision(object):
    """What pruning does with one allocation, and why.

    :ivar allocation: the :class:`~murano_cidr.engine.allocation.Allocation`.
    :ivar action: :data:`RELEASE` or :data:`KEEP` in a plan;
        :data:`RELEASED` or :data:`SKIPPED` once applied.
    :ivar reason: why, in words an operator can check.
    :ivar code: why, as one of :data:`OWNER_LIVE`, :data:`AGE_UNKNOWN`,
        :data:`IN_GRACE`, :data:`OWNER_GONE`, :data:`CHANGED` or
        :data:`ALREADY_RELEASED`, for programs.
    """

    allocation: allocation_mod.Allocation
    action: str
    reason: str
    code: str

    def to_dict(self):
        """Return the decision as a JSON-friendly dictionary."""
        result = self.allocation.to_dict()
        result.update(action=self.action, reason=self.reason,
                      code=self.code)
        return result


def as_utc(moment):
    """Return a timestamp as timezone-aware UTC (a naive one is UTC)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=datetime.timezone.utc)
    return moment


def utcnow():
    """Return the current time, timezone-aware, in UTC."""
    return datetime.datetime.now(datetime.timezone.utc)


def check_grace(grace):
    """Refuse a negative grace period.

    :raises murano_cidr.exceptions.InvalidArgument: if ``grace`` is
        negative.
    """
    if grace < datetime.timedelta(0):
        raise exceptions.InvalidArgument(name="grace period", value=str(grace),
                                         reason="must not be negative")


def aged(allocation, grace, now, code, reason):
    """Decide on an allocation that nothing shows to be in use.

    It is released only once it is older than the grace period: it may be
    younger than the listing that says it is unused.

    :param allocation: the :class:`~murano_cidr.engine.allocation.Allocation`.
    :param grace: the grace period, a :class:`datetime.timedelta`.
    :param now: the current time, timezone-aware.
    :param code: the code of a release, such as :data:`OWNER_GONE`.
    :param reason: why it is unused, in words.
    :returns: a :class:`Decision`: :data:`RELEASE` with ``code``, or
        :data:`KEEP` with :data:`AGE_UNKNOWN` or :data:`IN_GRACE`.
    """
    if allocation.created_at is None:
        return Decision(
            allocation, KEEP, "the driver does not record when it was "
            "allocated, so it cannot be shown to be older than the grace "
            "period", AGE_UNKNOWN)
    age = now - as_utc(allocation.created_at)
    if age < grace:
        return Decision(
            allocation, KEEP, "allocated %s ago, within the grace period of "
            "%s" % (format_duration(age), format_duration(grace)), IN_GRACE)
    return Decision(allocation, RELEASE, "%s; allocated %s ago"
                    % (reason, format_duration(age)), code)


def plan(allocations, live_owners, grace=DEFAULT_GRACE, now=None):
    """Decide which allocations to release.

    :param allocations: the driver's live allocations.
    :param live_owners: the owners that exist (:func:`read_live_owners`).
    :param grace: a :class:`datetime.timedelta`; younger allocations are
        kept whatever their owner.
    :param now: the current time (UTC); :func:`utcnow` if None.
    :returns: a list of :class:`Decision`, in the order given.
    :raises murano_cidr.exceptions.InvalidArgument: for a negative grace
        period.
    """
    check_grace(grace)
    now = as_utc(now or utcnow())
    decisions = []
    for a in allocations:
        if a.owner in live_owners:
            decisions.append(Decision(a, KEEP, "owner is live", OWNER_LIVE))
        else:
            decisions.append(aged(a, grace, now, OWNER_GONE,
                                  "owner not live"))
    return decisions


def check_share(decisions, max_percent, name="prune plan",
                hint="check that the live owners file lists the owner ids "
                "the integration uses (MuranoPL's id($), not Neutron "
                "network ids)"):
    """Refuse a plan that releases more than a share of the allocations.

    A live owners file that lists the wrong ids (Neutron network ids where
    the integration uses MuranoPL object ids, a file from another region)
    looks like a cloud whose networks were all deleted, and so does a
    router listing taken with too few rights. A plan built on one is
    refused unless told the share is intended.

    :param decisions: a plan from :func:`plan` (or from reconciling).
    :param max_percent: the largest share, in percent, of the planned
        allocations that may be released.
    :param name: what the plan is, for the message.
    :param hint: what to check first, for the message.
    :raises murano_cidr.exceptions.InvalidArgument: if the plan releases
        more.
    """
    releasing = sum(1 for d in decisions if d.action == RELEASE)
    if releasing and releasing * 100 > max_percent * len(decisions):
        raise exceptions.InvalidArgument(
            name=name, value="%d of %d" % (releasing, len(decisions)),
            reason="would release %d%% of the allocations, more than the "
            "%d%% allowed; %s, then pass --max-release %d if this is "
            "intended" % (releasing * 100 // len(decisions), max_percent,
                          hint,
                          min(100, releasing * 100 // len(decisions) + 1)))


def apply(driver, decisions):
    """Release what a plan says to release.

    Each allocation is read again first; one that changed since the plan
    (released, or allocated anew to the same owner) is skipped.

    :param driver: the
        :class:`~murano_cidr.engine.drivers.base.AllocatorDriver` the plan was
        made from.
    :param decisions: a plan from :func:`plan`; released ones change action
        to :data:`RELEASED`, skipped ones to :data:`SKIPPED`.
    :returns: ``decisions``.
    :raises murano_cidr.exceptions.BackendUnavailable: if the driver's store
        fails; what was released before stays released.
    """
    for decision in decisions:
        if decision.action != RELEASE:
            continue
        planned = decision.allocation
        current = driver.get(planned.owner)
        if current is None or (current.cidr, current.scope,
                               current.created_at) != (
                planned.cidr, planned.scope, planned.created_at):
            decision.action = SKIPPED
            decision.reason = "changed since it was read; left alone"
            decision.code = CHANGED
            continue
        if driver.release(planned.owner):
            decision.action = RELEASED
            LOG.info("Pruned %s of owner %s in scope %s: %s", planned.cidr,
                     planned.owner, planned.scope, decision.reason)
        else:
            decision.action = SKIPPED
            decision.reason = "already released"
            decision.code = ALREADY_RELEASED
    return decisions
