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

"""The optional MuranoPL change, made to the operator's own core library.

The engine plugin routes the engine's pick through murano-cidr; telling
murano-cidr when a subnet exists and when a network is deleted needs three
additions to the ``io.murano.resources.NeutronNetwork`` class of Murano's
core library (the ``io.murano`` package), which :func:`change` makes:

#. in ``deploy``, right after the step that sets ``$.subnetCidr`` from
   ``getAvailableCidr(...)``, a step that records in the object's
   attributes that this network allocated its CIDR (:data:`FLAG`);
#. in ``deploy``, right after the stack push that creates the subnet, a
   step that calls ``confirmCidr(id($))`` of the network explorer if the
   network allocated its CIDR;
#. a ``.destroy`` method, which Murano's engine calls when the network
   object goes away (its environment deleted, or the network removed from
   it), that calls ``releaseCidr(id($))``.

Both calls are guarded in MuranoPL itself: each is made only if the
explorer's class has the method (``typeinfo(...).methods``, Murano's
reflection, which lists the Python methods a class had when the engine
registered it). Only the engine plugin adds them, and only when it routes
the pick; with the driver unset, the plugin inactive for any reason or
murano-cidr uninstalled, the changed class deploys and deletes exactly as
the unchanged one.

The class file is found by structure, not by line numbers: the package's
``manifest.yaml`` must be that of ``io.murano`` and name the class's file
under ``Classes/``; the file must define ``NeutronNetwork`` with a
``deploy`` method whose body has exactly one such allocation step and,
after it, exactly one stack push. Anything else is refused with
:class:`~murano_cidr.operator.errors.UnexpectedCoreLibrary` and nothing is
written. The new lines are inserted into the file's own text, at the
indentation of the steps around them, so everything else stays as it was;
a change already made (by this command or by hand, recognised by the calls
it adds) is not made twice. The unguarded form that murano-cidr made
before is replaced by the guarded one. :func:`revert` removes exactly the
lines :func:`change` added, so the file is again byte for byte what it was.
"""

import dataclasses
import difflib
import os

from oslo_log import log as logging
import yaml

from murano_cidr.operator import muranopl_class as network

LOG = logging.getLogger(__name__)

#: The core library's package name and the class the change is made to.
PACKAGE = "io.murano"
CLASS = "io.murano.resources.NeutronNetwork"

#: What each part of the change does, in words (:attr:`Result.added`).
PARTS = network.PARTS

#: Where the core library is inside a checkout of Murano's source.
IN_SOURCE_TREE = os.path.join("meta", "io.murano")

_refuse = network.refuse


@dataclasses.dataclass
class Result(object):
    """What :func:`change` did, or would do.

    :ivar package: the core library's directory.
    :ivar path: the class file.
    :ivar before: its text before.
    :ivar after: its text after (the same if nothing was missing).
    :ivar added: the parts added (``flag``, ``confirm``, ``destroy``).
    """

    package: str
    path: str
    before: str
    after: str
    added: list

    def diff(self):
        """Return the change as a unified diff, paths from the package."""
        name = os.path.relpath(self.path, self.package)
        return "".join(difflib.unified_diff(
            self.before.splitlines(True), self.after.splitlines(True),
            "a/" + name, "b/" + name))


def find_package(path):
    """Return the core library directory at, or in the source tree at, path.

    :param path: the package directory (with ``manifest.yaml``), or a
        checkout of Murano whose ``meta/io.murano`` it is.
    :raises murano_cidr.operator.errors.UnexpectedCoreLibrary: if neither has a
        manifest.
    """
    for candidate in (path, os.path.join(path, IN_SOURCE_TREE)):
        if os.path.isfile(os.path.join(candidate, "manifest.yaml")):
            return candidate
    raise _refuse(path, "no manifest.yaml here or in %s: give the directory "
                  "of Murano's core library package (io.murano)"
                  % IN_SOURCE_TREE)


def _read(path):
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise _refuse(path, "cannot be read (%s)" % e)


def class_file(package):
    """Return the path of ``NeutronNetwork``'s file, from the manifest.

    :raises murano_cidr.operator.errors.UnexpectedCoreLibrary: if the manifest
        is not the core library's or does not name the class.
    """
    manifest_path = os.path.join(package, "manifest.yaml")
    try:
        manifest = yaml.safe_load(_read(manifest_path))
    except yaml.YAMLError as e:
        raise _refuse(manifest_path, "is not YAML (%s)"
                      % str(e).replace("\n", " "))
    if not isinstance(manifest, dict) or manifest.get("FullName") != PACKAGE:
        name = manifest.get("FullName") if isinstance(manifest, dict) else None
        raise _refuse(manifest_path, "is the manifest of %s, not of the core "
                      "library %s" % (name or "no package", PACKAGE))
    classes = manifest.get("Classes")
    relative = classes.get(CLASS) if isinstance(classes, dict) else None
    if not isinstance(relative, str):
        raise _refuse(manifest_path, "names no file for the class %s"
                      % CLASS)
    return os.path.join(package, "Classes", relative)


def _write(target, text):
    with open(target, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def change(path, dry_run=False):
    """Make the MuranoPL change to the core library at ``path``.

    An unguarded change made by an earlier murano-cidr is replaced by the
    guarded one (its parts are reported as added again).

    :param path: see :func:`find_package`.
    :param dry_run: compute the change without writing it.
    :returns: a :class:`Result`; ``added`` is empty if the change was
        already made.
    :raises murano_cidr.operator.errors.UnexpectedCoreLibrary: if the tree does
        not look like the core library the change fits; nothing is written.
    """
    package = find_package(path)
    target = class_file(package)
    before = _read(target)
    plan = network.Plan(target, before)
    base, guarded = network.original(target, before)
    parts = list(PARTS) if guarded is False else plan.missing()
    if guarded is False:
        plan = network.Plan(target, base)
    after = network.insert(base, plan.insertions(parts)) if parts else before
    unguarded = network.unguarded(after)
    if unguarded:
        raise _refuse(target, "it calls %s without checking that the "
                      "explorer has it (a change made by hand?): guard the "
                      "call as patch-core-library does, or remove it"
                      % " and ".join(unguarded))
    if parts and network.Plan(target, after).missing():
        # NOTE: a layout this module misreads, rather than a broken file.
        raise _refuse(target, "the change could not be placed in it")
    if parts and not dry_run:
        _write(target, after)
        LOG.info("Added %s to %s", ", ".join(parts), target)
    return Result(package, target, before, after, parts)


def revert(path, dry_run=False):
    """Remove the MuranoPL change from the core library at ``path``.

    The lines :func:`change` added (in its guarded form, or the unguarded
    form of an earlier murano-cidr) are removed, and nothing else: the
    file is again byte for byte what it was before the change.

    :param path: see :func:`find_package`.
    :param dry_run: compute the result without writing it.
    :returns: a :class:`Result`; ``added`` lists the parts removed, empty
        if there was no change to remove.
    :raises murano_cidr.operator.errors.UnexpectedCoreLibrary: if the tree does
        not look like the core library, or its change was edited by hand;
        nothing is written.
    """
    package = find_package(path)
    target = class_file(package)
    before = _read(target)
    network.Plan(target, before)
    after, guarded = network.original(target, before)
    if guarded is None and any(call in before for call in network.CALLS):
        raise _refuse(target, "its murano-cidr change is not as "
                      "patch-core-library makes it (made or edited by "
                      "hand?): remove it by hand")
    parts = [] if guarded is None else list(PARTS)
    if parts and not dry_run:
        _write(target, after)
        LOG.info("Removed murano-cidr's change from %s", target)
    return Result(package, target, before, after, parts)
