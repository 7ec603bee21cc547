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

"""Import CIDRs that already exist on a cloud into a driver that keeps state.

When a live cloud switches from ``random`` or ``legacy`` to ``db``, the
subnets its routers already carry must be recorded first, or the new driver
could hand one of them out again. The input is a JSON or CSV file of
``scope`` (the router id), ``cidr`` and ``owner`` (the network id); see
``doc/source/admin/operations.rst`` for producing it with the ``openstack``
client.

Importing happens in two steps so that an operator sees every problem at
once: :func:`read_file` parses and validates the file against the pools, and
:func:`plan` compares it with what the driver holds. :func:`apply` records
the new rows, all or nothing unless asked to continue past errors. A file
is read as a stream (:mod:`~murano_cidr.operator.operations.json_stream` for
JSON) and its rows kept on disk
(:mod:`~murano_cidr.operator.operations.import_rows`), so a file of millions of
rows takes bounded memory.

The file formats (a JSON list, JSON Lines, CSV, the output of ``murano-cidr
list --format json``, and the accepted column aliases) are described in
``doc/source/admin/operations.rst``.
"""

from oslo_log import log as logging

from murano_cidr.engine import allocation as allocation_mod
from murano_cidr.engine import pool_cidrs
from murano_cidr import exceptions
from murano_cidr.operator import errors
from murano_cidr.operator.operations import files
from murano_cidr.operator.operations import import_rows
from murano_cidr.operator.operations import json_stream

LOG = logging.getLogger(__name__)

_ALIASES = {"router": "scope", "router_id": "scope",
            "network": "owner", "network_id": "owner"}
_FIELDS = ("owner", "cidr", "scope", "ip_version")
#: Columns of ``murano-cidr list --format json`` that are not imported.
_IGNORED = ("confirmed", "created_at", "released_at")

Row = import_rows.Row
Rows = import_rows.Rows
NEW = import_rows.NEW
PRESENT = import_rows.PRESENT
INVALID = import_rows.INVALID
CONFLICT = import_rows.CONFLICT
IMPORTED = import_rows.IMPORTED

#: Rows between two reports of progress.
PROGRESS_EVERY = 1000


def _normalise(record):
    """Map aliases to field names; return (fields, error)."""
    fields = {}
    for key, value in record.items():
        if not isinstance(key, str):
            return None, "unexpected key %r" % (key,)
        name = key.strip().lower()
        name = _ALIASES.get(name, name)
        if name in _IGNORED:
            continue
        if name not in _FIELDS:
            return None, ("unknown field %r (expected %s)"
                          % (key, ", ".join(_FIELDS)))
        if name in fields:
            return None, "field %r given twice" % name
        fields[name] = value
    return fields, None


def _given(record):
    """Return the owner, cidr and scope a record had, as text."""
    if not isinstance(record, dict):
        return {}
    given = {}
    for key, value in record.items():
        name = _ALIASES.get(str(key).strip().lower(), str(key).strip().lower())
        if name in ("owner", "cidr", "scope") and value not in (None, ""):
            given[name] = value if isinstance(value, str) else repr(value)
    return given


def _check_header(path):
    """Return a check that a CSV header names an owner and a cidr column."""
    def check(line, header):
        names = {_ALIASES.get(h, h) for h in header}
        missing = [f for f in ("owner", "cidr", "scope") if f not in names]
        unknown = [h for h in header if _ALIASES.get(h, h) not in _FIELDS
                   and h not in _IGNORED]
        if "owner" in missing or "cidr" in missing or unknown:
            raise errors.InvalidInputFile(
                path=path, reason="line %d: the header %s lacks the column%s "
                "%s%s; expected owner (or network), cidr and scope (or "
                "router), and optionally ip_version" % (
                    line, ",".join(header), "s" if len(missing) > 1 else "",
                    " and ".join([", ".join(missing[:-1]), missing[-1]]
                                 if len(missing) > 1 else missing) or "-",
                    "; unknown: %s" % ", ".join(unknown) if unknown else ""))
    return check


def _allocation(record, pools):
    """Validate one record.

    :returns: ``(allocation, network)`` (a :class:`netaddr.IPNetwork`), or
        ``(None, error)``.
    """
    if not isinstance(record, dict):
        return None, ("expected an object with scope, cidr and owner, got %s"
                      % type(record).__name__)
    fields, error = _normalise(record)
    if error:
        return None, error
    missing = [f for f in ("owner", "cidr") if fields.get(f) in (None, "")]
    if missing:
        return None, "missing %s" % " and ".join(missing)
    scope = fields.get("scope")
    if scope == "":
        scope = None
    try:
        owner = allocation_mod.validate_owner(fields["owner"])
        scope = allocation_mod.validate_scope(scope)
    except exceptions.InvalidArgument as e:
        return None, str(e)
    value = fields["cidr"]
    if not isinstance(value, str):
        return None, "cidr must be a string, got %r" % (value,)
    try:
        net = pool_cidrs.network(value, "cidr")
    except exceptions.InvalidCidr as e:
        return None, str(e)
    ip_version = fields.get("ip_version")
    if ip_version not in (None, ""):
        try:
            ip_version = int(ip_version)
        except (TypeError, ValueError):
            return None, "ip_version must be 4 or 6, got %r" % (ip_version,)
        if ip_version != net.version:
            return None, ("%s is an IPv%d CIDR but ip_version says %d"
                          % (net, net.version, ip_version))
    pool = pools.get(net.version)
    if pool is None or not pool.contains(net):
        configured = ", ".join(str(p) for p in pools.values()) or "none"
        return None, ("%s lies outside every configured pool (%s); it "
                      "cannot collide with an allocation, leave it out"
                      % (net, configured))
    return allocation_mod.Allocation(owner=owner, cidr=str(net.cidr),
                                     scope=scope, ip_version=net.version,
                                     confirmed=True), net


def _records(opened, fmt):
    """Yield ``(where, record)`` pairs from an :class:`files.Input`."""
    path = opened.path
    if files.detect_format(path, opened.first, fmt) == files.CSV:
        for line, record in files.iter_csv(path, opened.lines(),
                                           _check_header(path)):
            yield "line %d" % line, record
        return
    for number, (where, record) in enumerate(
            json_stream.items(path, opened.lines()), 1):
        if number == 1 and not where.startswith("item") and isinstance(
                record, dict) and "allocations" in record:
            # A report of prune or reconcile, read whole.
            record = record["allocations"]
            if not isinstance(record, list):
                raise errors.InvalidInputFile(
                    path=path, reason="expected a JSON list of objects with "
                    "scope, cidr and owner, got %s"
                    % type(record).__name__)
            for item, value in enumerate(record, 1):
                yield "item %d" % item, value
            continue
        yield where, record


def read_file(path, pools, fmt=None, progress=None):
    """Read and validate an import file.

    Every row is checked on its own (fields, CIDR syntax, inside a pool) and
    against the others (an owner appears once; no two CIDRs of one scope
    overlap). Nothing is written.

    :param path: the file, or ``-`` for standard input.
    :param pools: a dictionary from IP version to
        :class:`~murano_cidr.engine.pool.Pool`, as a driver's ``pools``.
    :param fmt: ``"json"`` (a list, or JSON Lines) or ``"csv"``; None
        guesses from the name and content.
    :param progress: if given, called with the number of bytes read since
        its last call, now and then.
    :returns: a :class:`Rows` (close it), invalid rows with status
        :data:`INVALID` and a reason.
    :raises murano_cidr.operator.errors.InvalidInputFile: if the file as a
        whole cannot be read or parsed, or holds no row.
    """
    rows = Rows()
    try:
        with files.open_input(path) as opened:
            reported = 0
            for where, record in _records(opened, fmt):
                allocation, result = _allocation(record, pools)
                if allocation is None:
                    rows.add(Row(where, None, INVALID, result,
                                 _given(record)))
                else:
                    rows.add(Row(where, allocation), result)
                if progress is not None and not len(rows) % PROGRESS_EVERY:
                    progress(opened.consumed - reported)
                    reported = opened.consumed
            if progress is not None:
                progress(opened.consumed - reported)
        if not len(rows):
            raise errors.InvalidInputFile(path=path,
                                          reason="holds no allocation")
        rows.check_duplicates()
    except BaseException:
        rows.close()
        raise
    return rows


def plan(rows, existing):
    """Compare valid rows with the driver's live allocations.

    A row identical to a live allocation (same owner, CIDR and scope)
    becomes :data:`PRESENT`: importing twice changes nothing. A row whose
    owner holds something else, or whose CIDR overlaps another owner's live
    allocation of its scope, becomes :data:`CONFLICT`; nothing live is ever
    overwritten.

    :param rows: the :class:`Rows` from :func:`read_file`, updated in
        place.
    :param existing: the driver's live allocations, an iterable read once
        (``driver.live_allocations()``); they are kept on disk beside the
        rows, not in memory.
    :returns: ``rows``.
    """
    rows.compare_live(existing)
    return rows


def count(rows):
    """Count rows by status.

    :returns: a dictionary from every status to a number.
    """
    return rows.count()


def apply(driver, rows, continue_on_error=False, progress=None):
    """Record the new rows of a plan.

    Without ``continue_on_error`` every new row is recorded in one call to
    the driver's ``import_stream``, which is all or nothing (one
    transaction for ``db``). With it, rows are recorded one at a time and a
    row the driver refuses (someone allocated an overlapping CIDR since the
    plan was made) is marked :data:`CONFLICT` and skipped.

    :param driver: an :class:`~murano_cidr.engine.drivers.base.AllocatorDriver`
        that keeps state.
    :param rows: a plan from :func:`plan`; imported rows change status to
        :data:`IMPORTED`.
    :param continue_on_error: record what can be recorded.
    :param progress: if given, called with the number of rows recorded
        since its last call, now and then.
    :returns: ``rows``.
    :raises murano_cidr.operator.errors.AllocationConflict: without
        ``continue_on_error``, if the driver refuses the batch; nothing is
        recorded.
    :raises murano_cidr.exceptions.OwnerConflict: likewise.
    :raises murano_cidr.exceptions.NotSupported: if the driver keeps no
        state.
    """
    new = rows.count()[NEW]
    if not new:
        return rows
    if not continue_on_error:
        driver.import_stream(lambda: _allocations(rows, progress))
        rows.mark_all(NEW, IMPORTED)
        LOG.info("Imported %d allocations", new)
        return rows
    rows.mark(_one_by_one(driver, rows, progress))
    LOG.info("Imported %d of %d allocations", rows.count()[IMPORTED], new)
    return rows


def _counted(rows, progress):
    """Yield the new rows, calling ``progress`` now and then."""
    n = 0
    for n, row in enumerate(rows.select(NEW), 1):
        if progress is not None and not n % PROGRESS_EVERY:
            progress(PROGRESS_EVERY)
        yield row
    if progress is not None and n % PROGRESS_EVERY:
        progress(n % PROGRESS_EVERY)


def _allocations(rows, progress):
    for row in _counted(rows, progress):
        yield row.allocation


def _one_by_one(driver, rows, progress):
    for row in _counted(rows, progress):
        try:
            driver.import_allocations([row.allocation])
        except (errors.AllocationConflict,
                exceptions.OwnerConflict) as e:
            yield row.number, CONFLICT, str(e)
            continue
        yield row.number, IMPORTED, ""
