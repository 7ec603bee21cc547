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

"""A Jepsen-style history of allocator calls, and its checker.

Record every call the test's processes make, then check afterwards that
the history is one a correct allocator could have produced.

Recording
=========

Each process makes its own :class:`Recorder`, on its own file in a
directory the test shares with its workers (or in memory, with no path)::

    recorder = history.Recorder(os.path.join(directory, "p1.jsonl"), "p1")
    cidr = recorder.allocate(driver, "net-1", scope="router-1")
    recorder.confirm(driver, "net-1")
    recorder.release(driver, "net-1")
    recorder.call("allocate", "net-2", "router-1", driver.allocate,
                  ("net-2",), {"scope": "router-1", "taken": taken})

A call is written as two lines, one before it starts and one when it ends,
each flushed to the file at once, so a process killed in the middle of a
call leaves a call whose outcome is unknown rather than no call at all.
Times are ``time.monotonic_ns()`` (``CLOCK_MONOTONIC`` on Linux): one clock
for every process of a host, so calls of different processes compare. A
call never raises: it returns the result, or None when it failed, and
records what happened as its :attr:`Op.status`:

``ok``       the call returned; :attr:`Op.value` is what it returned.
``fail``     it raised a :class:`murano_cidr.exceptions.MuranoCidrException`
             (typed; :attr:`Op.error` names the class, :attr:`Op.errors`
             the class and its bases). It may still have taken effect (a
             commit whose answer was lost).
``crash``    it raised anything else: always a violation.
``unknown``  it never ended (the process died or the test gave up).

Checking
========

After the run, the test loads every file and checks the calls::

    ops = history.load(directory)
    violations = history.check(ops, final=final_state,
                               allowed_errors={"BackendUnavailable"})
    self.assertEqual([], violations)

:func:`check` returns a list of :class:`Violation` (empty when the history
holds; each prints as one readable line). It reports:

* ``crash``: a call that raised an untyped exception;
* ``error``: a typed error not in ``allowed_errors`` (by class name, a
  base class allows its subclasses; None allows every typed error);
* ``duplicate``: an owner given a second, different CIDR while the first
  was live;
* ``overlap``: two owners of one scope holding overlapping CIDRs at a
  moment when both were live (scope None is not checked: overlaps are
  allowed there);
* ``lost``: with ``final`` (``{owner: cidr}``, what the backend holds at the
  end), an owner whose allocate succeeded and whose release was never
  tried but that the backend does not hold, or holds with another CIDR.

An allocation is live from the start of the allocate call that created it
(conservatively: it may have taken effect at any point of the call, or at
the start of an earlier failed or unknown call of the same owner) until
the end of the first successful release of its owner. A release that
failed, crashed or never ended leaves the allocation live forever, and so
does no release. An allocate whose result is unknown (failed, crashed or
never ended) but whose CIDR ``final`` reveals is live forever from its
start.

That is the strict reading (``strict=True``, the default): it flags every
pair that *could* have overlapped, so a test that hands a CIDR from one
owner to another must let the release end before the next allocate
starts. A test that releases and allocates in one scope concurrently
passes ``strict=False``, which flags only the pairs that *must* have
overlapped: an allocation is then certainly live from the end of its
allocate until the start of its owner's first release, whatever that
release's outcome (an allocation only ``final`` reveals is live at the
end).
"""

import collections
import json
import os
import time

import netaddr

from murano_cidr import exceptions

OK = "ok"
FAIL = "fail"
CRASH = "crash"
UNKNOWN = "unknown"

#: Later than every call: the end of an interval that never ends.
FOREVER = float("inf")

ALLOCATE = "allocate"
CONFIRM = "confirm"
RELEASE = "release"


class Op(collections.namedtuple(
        "Op", "process index kind owner scope start end status value "
              "error errors")):
    """One call: who made it, when, and how it ended.

    :ivar process: the recording process's name.
    :ivar index: the call's number within its process.
    :ivar kind: ``allocate``, ``confirm``, ``release`` or any other name.
    :ivar owner: the owner the call was about.
    :ivar scope: the scope asked for (allocate), or None.
    :ivar start: ``time.monotonic_ns()`` before the call.
    :ivar end: ``time.monotonic_ns()`` after it, or None if it never ended.
    :ivar status: ``ok``, ``fail``, ``crash`` or ``unknown``.
    :ivar value: what the call returned (``ok`` only).
    :ivar error: the exception's class name and message, or None.
    :ivar errors: the exception's class and base class names.
    """

    def __str__(self):
        outcome = self.value if self.status == OK else self.error
        return "%s#%s %s(%s, scope=%s) -> %s %s [%s..%s]" % (
            self.process, self.index, self.kind, self.owner, self.scope,
            self.status, outcome, self.start, self.end)


def make_op(kind, owner, start, end, status=OK, value=None, scope=None,
            error=None, errors=(), process="p", index=0):
    """Build an :class:`Op` by hand (for tests of the checker)."""
    return Op(process, index, kind, owner, scope, start, end, status, value,
              error, tuple(errors))


class Violation(collections.namedtuple("Violation", "kind message ops")):
    """Something no correct allocator does; ``ops`` are the calls involved."""

    def __str__(self):
        return "%s: %s" % (self.kind, self.message)

    # One readable line in a failed assertion, without the calls' details.
    __repr__ = __str__


def _error_names(error):
    names = []
    for cls in type(error).__mro__:
        if cls in (Exception, BaseException, object):
            break
        names.append(cls.__name__)
    return names


class Recorder(object):
    """Record the calls of one process.

    :param path: the file to append the calls to, or None to keep them in
        memory only (:attr:`ops`).
    :param process: this process's name in the history.
    """

    def __init__(self, path=None, process="p"):
        self.path = path
        self.process = process
        self.ops = []
        self._fd = None
        if path is not None:
            self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                               0o644)

    def close(self):
        """Close the file; the calls already written stay."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _write(self, entry):
        if self._fd is not None:
            os.write(self._fd, (json.dumps(entry) + "\n").encode("utf-8"))

    def call(self, kind, owner, scope, func, args=(), kwargs=None):
        """Call ``func(*args, **kwargs)`` and record it.

        :param kind: the call's name in the history (``allocate``, ...).
        :param owner: the owner the call is about.
        :param scope: the scope it is about (allocate), or None.
        :param func: what to call.
        :param args: its positional arguments.
        :param kwargs: its keyword arguments.
        :returns: what ``func`` returned, or None if it raised.
        """
        index = len(self.ops)
        start = time.monotonic_ns()
        self._write({"process": self.process, "index": index, "kind": kind,
                     "owner": owner, "scope": scope, "start": start})
        value = error = None
        errors = []
        try:
            value = func(*args, **(kwargs or {}))
            status = OK
        except exceptions.MuranoCidrException as e:
            status, error, errors = FAIL, _describe(e), _error_names(e)
        except Exception as e:
            status, error, errors = CRASH, _describe(e), _error_names(e)
        end = time.monotonic_ns()
        if not isinstance(value, (str, int, float, bool, type(None))):
            value = str(value)
        self._write({"process": self.process, "index": index, "end": end,
                     "status": status, "value": value, "error": error,
                     "errors": errors})
        self.ops.append(Op(self.process, index, kind, owner, scope, start,
                           end, status, value, error, tuple(errors)))
        return value

    def allocate(self, driver, owner, scope=None, **kwargs):
        """Record ``driver.allocate(owner, scope=scope, **kwargs)``."""
        kwargs["scope"] = scope
        return self.call(ALLOCATE, owner, scope, driver.allocate, (owner,),
                         kwargs)

    def confirm(self, driver, owner):
        """Record ``driver.confirm(owner)``."""
        return self.call(CONFIRM, owner, None, driver.confirm, (owner,))

    def release(self, driver, owner):
        """Record ``driver.release(owner)``."""
        return self.call(RELEASE, owner, None, driver.release, (owner,))


def _describe(error):
    return "%s: %s" % (type(error).__name__, error)


def load(directory):
    """Read every ``*.jsonl`` file a :class:`Recorder` wrote in ``directory``.

    :returns: the calls, in order of start; a call that never ended has
        status ``unknown`` and no end.
    """
    started = {}
    ended = {}
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".jsonl"):
            continue
        with open(os.path.join(directory, name), encoding="utf-8") as f:
            for line in f:
                if not line.endswith("\n"):
                    break  # the process died while writing this line
                entry = json.loads(line)
                key = (entry["process"], entry["index"])
                (ended if "end" in entry else started)[key] = entry
    ops = []
    for key, entry in started.items():
        done = ended.get(key, {"end": None, "status": UNKNOWN})
        ops.append(Op(entry["process"], entry["index"], entry["kind"],
                      entry["owner"], entry["scope"], entry["start"],
                      done["end"], done["status"], done.get("value"),
                      done.get("error"), tuple(done.get("errors", ()))))
    return sorted(ops, key=lambda op: (op.start, op.process, op.index))


class _Allocation(object):

    def __init__(self, owner, scope, cidr, live_from, ops):
        self.owner = owner
        self.scope = scope
        self.cidr = cidr
        self.network = netaddr.IPNetwork(cidr)
        self.live_from = live_from
        self.live_until = FOREVER
        self.ops = list(ops)
        self.release_tried = False

    def __str__(self):
        return "%s of %s in %s" % (self.cidr, self.owner, self.scope)


def _allocations(ops, strict, final, violations):
    """Replay each owner's calls into allocations with live intervals."""
    by_owner = collections.defaultdict(list)
    for op in ops:
        if op.kind in (ALLOCATE, RELEASE):
            by_owner[op.owner].append(op)
    history_end = max((op.end or op.start for op in ops), default=0)
    result = []
    for owner, owner_ops in by_owner.items():
        owner_ops.sort(key=lambda op: op.start)
        current = None       # the owner's open allocation
        pending = []         # allocates of unknown outcome since then
        for op in owner_ops:
            if op.kind == ALLOCATE and op.status == OK:
                if current is not None and current.live_until == FOREVER:
                    if current.cidr != op.value and current.release_tried:
                        # A release of unknown outcome took effect after
                        # all, at the latest when this call ended.
                        current.live_until = op.end
                    elif current.cidr != op.value:
                        violations.append(Violation(
                            "duplicate", "owner %s was given %s while it "
                            "held %s" % (owner, op.value, current.cidr),
                            current.ops + [op]))
                        continue
                    if current.live_until == FOREVER:
                        current.ops.append(op)
                        continue
                first = (pending or [op])[0]
                current = _Allocation(owner, op.scope, op.value,
                                      first.start if strict else op.end,
                                      pending + [op])
                pending = []
                result.append(current)
            elif op.kind == ALLOCATE:
                pending.append(op)
            elif current is not None and current.live_until == FOREVER:
                current.release_tried = True
                current.ops.append(op)
                if not strict:
                    current.live_until = op.start
                elif op.status == OK:
                    current.live_until = op.end
            elif op.status == OK:
                pending = []  # whatever a failed allocate did is undone
        cidr = (final or {}).get(owner)
        if current is not None and current.live_until == FOREVER:
            if final is not None and not current.release_tried \
                    and cidr != current.cidr:
                violations.append(Violation(
                    "lost", "owner %s was given %s but the backend holds %s "
                    "at the end" % (owner, current.cidr, cidr), current.ops))
        elif cidr is not None and pending:
            result.append(_Allocation(
                owner, pending[0].scope, cidr,
                pending[0].start if strict else history_end, pending))
    return result


def _overlaps(allocations):
    """Pairs of overlapping CIDRs of one scope whose live intervals meet."""
    by_scope = collections.defaultdict(list)
    for allocation in allocations:
        if allocation.scope is not None:
            by_scope[(allocation.scope,
                      allocation.network.version)].append(allocation)
    for group in by_scope.values():
        group.sort(key=lambda a: a.network.first)
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                if b.network.first > a.network.last:
                    break
                if a.owner != b.owner and a.live_from < b.live_until \
                        and b.live_from < a.live_until:
                    yield a, b


def check(ops, strict=True, final=None, allowed_errors=None):
    """Check a history; see the module's documentation.

    :param ops: the calls (:func:`load`, :attr:`Recorder.ops`, or
        :func:`make_op`), in any order.
    :param strict: flag what could have overlapped (True) or only what
        must have (False).
    :param final: ``{owner: cidr}`` the backend holds at the end, or None.
    :param allowed_errors: names of the typed errors a call may end in
        (a base class allows its subclasses), or None for any typed error.
    :returns: a list of :class:`Violation`, empty if the history holds.
    """
    violations = []
    for op in ops:
        if op.status == CRASH:
            violations.append(Violation(
                "crash", "untyped error from %s" % (op,), [op]))
        elif op.status == FAIL and allowed_errors is not None \
                and not set(op.errors) & set(allowed_errors):
            violations.append(Violation(
                "error", "unexpected typed error from %s" % (op,), [op]))
    allocations = _allocations(ops, strict, final, violations)
    for a, b in _overlaps(allocations):
        violations.append(Violation(
            "overlap", "%s and %s were live at the same time" % (a, b),
            a.ops + b.ops))
    return violations
