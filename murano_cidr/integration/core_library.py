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

The class file is found by structure, not by line numbers: the package's
``manifest.yaml`` must be that of ``io.murano`` and name the class's file
under ``Classes/``; the file must define ``NeutronNetwork`` with a
``deploy`` method whose body has exactly one such allocation step and,
after it, exactly one stack push. Anything else is refused with
:class:`~murano_cidr.exceptions.UnexpectedCoreLibrary` and nothing is
written. The new lines are inserted into the file's own text, at the
indentation of the steps around them, so everything else stays as it was;
a change already made (by this command or by hand, recognised by the calls
it adds) is not made twice.
"""

import dataclasses
import difflib
import os

from oslo_log import log as logging
import yaml

from murano_cidr import exceptions

LOG = logging.getLogger(__name__)

#: The core library's package name and the class the change is made to.
PACKAGE = "io.murano"
CLASS = "io.murano.resources.NeutronNetwork"

#: The object attribute that says the network allocated its CIDR.
FLAG = "cidrAllocated"

#: What marks each part of the change as made.
FLAG_CALL = "setAttr(%s" % FLAG
CONFIRM_CALL = "confirmCidr("
RELEASE_CALL = "releaseCidr("

#: What each part of the change does, in words (:attr:`Result.added`).
PARTS = {
    "flag": "deploy records that the network allocated its CIDR",
    "confirm": "deploy confirms the CIDR after the stack push",
    "destroy": "a new .destroy releases it",
}

_EXPLORER = "$._getNetExplorer()"
_NOTE = "# murano-cidr: %s"

#: Where the core library is inside a checkout of Murano's source.
IN_SOURCE_TREE = os.path.join("meta", "io.murano")


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


def _refuse(path, reason):
    return exceptions.UnexpectedCoreLibrary(path=path, reason=reason)


def find_package(path):
    """Return the core library directory at, or in the source tree at, path.

    :param path: the package directory (with ``manifest.yaml``), or a
        checkout of Murano whose ``meta/io.murano`` it is.
    :raises murano_cidr.exceptions.UnexpectedCoreLibrary: if neither has a
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

    :raises murano_cidr.exceptions.UnexpectedCoreLibrary: if the manifest
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


# -- the class file, as YAML nodes with their positions ----------------------

def _get(mapping, key):
    if isinstance(mapping, yaml.MappingNode):
        for k, v in mapping.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return k, v
    return None, None


def _scalars(node):
    if isinstance(node, yaml.ScalarNode):
        yield node
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _scalars(item)
    elif isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            yield from _scalars(k)
            yield from _scalars(v)


def _mentions(node, text):
    return node is not None and any(
        text in s.value for s in _scalars(node))


def _steps(node):
    """Yield ``(sequence, item)`` for every step under ``node``."""
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield node, item
            yield from _steps(item)
    elif isinstance(node, yaml.MappingNode):
        for _k, v in node.value:
            yield from _steps(v)


def _is_allocation(item):
    return (isinstance(item, yaml.MappingNode) and len(item.value) == 1
            and isinstance(item.value[0][0], yaml.ScalarNode)
            and item.value[0][0].value.replace(" ", "") == "$.subnetCidr"
            and _mentions(item.value[0][1], "getAvailableCidr("))


def _is_push(item):
    return (isinstance(item, yaml.ScalarNode)
            and item.value.replace(" ", "").endswith(".stack.push()"))


def _last_line(node):
    """The index of the last line holding part of ``node``."""
    return max(s.end_mark.line - (1 if s.end_mark.column == 0 else 0)
               for s in _scalars(node))


class _Plan(object):
    """The class file's structure, and what is missing from it."""

    def __init__(self, path, text):
        try:
            root = yaml.compose(text)
        except yaml.YAMLError as e:
            raise _refuse(path, "is not YAML (%s)"
                          % str(e).replace("\n", " "))
        _k, name = _get(root, "Name")
        if getattr(name, "value", None) != "NeutronNetwork":
            raise _refuse(path, "does not define the class NeutronNetwork")
        _k, methods = _get(root, "Methods")
        deploy_key, deploy = _get(methods, "deploy")
        if deploy is None or methods.flow_style:
            raise _refuse(path, "has no block mapping Methods with deploy")
        steps = list(_steps(_get(deploy, "Body")[1]))
        allocations = [s for s in steps if _is_allocation(s[1])]
        if len(allocations) != 1:
            raise _refuse(path, "deploy has %d steps that set $.subnetCidr "
                          "from getAvailableCidr(...), not one"
                          % len(allocations))
        self.allocation = allocations[0]
        after = self.allocation[1].start_mark.index
        pushes = [s for s in steps if _is_push(s[1])]
        if len(pushes) != 1 or pushes[0][1].start_mark.index < after:
            raise _refuse(path, "deploy has %d stack pushes after its "
                          "allocation, not one" % sum(
                              p[1].start_mark.index > after for p in pushes))
        self.push = pushes[0]
        if any(seq.flow_style for seq, _i in (self.allocation, self.push)):
            raise _refuse(path, "deploy's steps are in flow style")
        self.deploy_key, self.deploy = deploy_key, deploy
        _k, self.destroy = _get(methods, ".destroy")
        if self.destroy is not None and not _mentions(self.destroy,
                                                      RELEASE_CALL):
            raise _refuse(path, "NeutronNetwork has a .destroy of its own; "
                          "add the step - %s.releaseCidr(id($)) to it by "
                          "hand" % _EXPLORER)

    def missing(self):
        """Return the parts of the change not made yet."""
        parts = []
        if not _mentions(self.deploy, FLAG_CALL):
            parts.append("flag")
        if not _mentions(self.deploy, CONFIRM_CALL):
            parts.append("confirm")
        if self.destroy is None:
            parts.append("destroy")
        return parts

    def insertions(self, parts):
        """Return ``{line index: [new lines]}``, inserted after the line."""
        added = {}
        if "flag" in parts:
            seq, item = self.allocation
            pad = " " * seq.start_mark.column
            added.setdefault(_last_line(item), []).extend([
                pad + _NOTE % "this network allocated its CIDR",
                pad + "- $.setAttr(%s, true)" % FLAG])
        if "confirm" in parts:
            seq, item = self.push
            pad = " " * seq.start_mark.column
            added.setdefault(_last_line(item), []).extend([
                pad + _NOTE % "the subnet exists now",
                pad + "- If: $.getAttr(%s, false)" % FLAG,
                pad + "  Then:",
                pad + "    - %s.confirmCidr(id($))" % _EXPLORER])
        if "destroy" in parts:
            pad = " " * self.deploy_key.start_mark.column
            added.setdefault(_last_line(self.deploy), []).extend([
                "",
                pad + ".destroy:",
                pad + "  Body:",
                pad + "    " + _NOTE % "the network is deleted: its CIDR "
                "may be reused",
                pad + "    - %s.releaseCidr(id($))" % _EXPLORER])
        return added


def _newline(text):
    return "\r\n" if "\r\n" in text else "\n"


def _insert(text, added):
    newline = _newline(text)
    lines = text.splitlines(True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += newline
    for index in sorted(added, reverse=True):
        lines[index + 1:index + 1] = [line + newline
                                      for line in added[index]]
    return "".join(lines)


def change(path, dry_run=False):
    """Make the MuranoPL change to the core library at ``path``.

    :param path: see :func:`find_package`.
    :param dry_run: compute the change without writing it.
    :returns: a :class:`Result`; ``added`` is empty if the change was
        already made.
    :raises murano_cidr.exceptions.UnexpectedCoreLibrary: if the tree does
        not look like the core library the change fits; nothing is written.
    """
    package = find_package(path)
    target = class_file(package)
    before = _read(target)
    plan = _Plan(target, before)
    parts = plan.missing()
    after = _insert(before, plan.insertions(parts)) if parts else before
    if parts and _Plan(target, after).missing():
        # NOTE: a layout this module misreads, rather than a broken file.
        raise _refuse(target, "the change could not be placed in it")
    if parts and not dry_run:
        with open(target, "w", encoding="utf-8", newline="") as f:
            f.write(after)
        LOG.info("Added %s to %s", ", ".join(parts), target)
    return Result(package, target, before, after, parts)
