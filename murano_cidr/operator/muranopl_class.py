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

"""The ``NeutronNetwork`` class file: its structure, and the lines added.

:mod:`murano_cidr.operator.muranopl_patch` finds the file and writes it;
this module reads the class's YAML nodes (with their positions), says
which parts of the change are missing, and adds or removes exactly the
lines of each part, in the file's own text.
"""

import yaml

from murano_cidr.operator import errors

#: The object attribute that says the network allocated its CIDR.
FLAG = "cidrAllocated"

#: What marks each part of the change as made.
FLAG_CALL = "setAttr(%s" % FLAG
CONFIRM_CALL = "confirmCidr("
RELEASE_CALL = "releaseCidr("
CALLS = (FLAG_CALL, CONFIRM_CALL, RELEASE_CALL)

#: What each part of the change does, in words (the names in
#: :attr:`murano_cidr.operator.muranopl_patch.Result.added`).
PARTS = {
    "flag": "deploy records that the network allocated its CIDR",
    "confirm": "deploy confirms the CIDR after the stack push",
    "destroy": "a new .destroy releases it",
}

_EXPLORER = "$._getNetExplorer()"
_NOTE = "# murano-cidr: %s"

#: The MuranoPL test that the explorer has a method: Murano's reflection.
HAS_METHOD = "typeinfo(%s).methods.any($.name = %%s)" % _EXPLORER

_FLAG_NOTE = _NOTE % "this network allocated its CIDR"
_CONFIRM_NOTE = _NOTE % "the subnet exists now"
_DESTROY_NOTE = _NOTE % "the network is deleted: its CIDR may be reused"


def refuse(path, reason):
    """Return the error that refuses the file at ``path``, saying why."""
    return errors.UnexpectedCoreLibrary(path=path, reason=reason)


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


class Plan(object):
    """The class file's structure, and what is missing from it.

    :param path: the file's path, for the error.
    :param text: its text.
    :raises murano_cidr.operator.errors.UnexpectedCoreLibrary: if the text is
        not a ``NeutronNetwork`` the change fits.
    """

    def __init__(self, path, text):
        try:
            root = yaml.compose(text)
        except yaml.YAMLError as e:
            raise refuse(path, "is not YAML (%s)"
                         % str(e).replace("\n", " "))
        _k, name = _get(root, "Name")
        if getattr(name, "value", None) != "NeutronNetwork":
            raise refuse(path, "does not define the class NeutronNetwork")
        _k, methods = _get(root, "Methods")
        deploy_key, deploy = _get(methods, "deploy")
        if deploy is None or methods.flow_style:
            raise refuse(path, "has no block mapping Methods with deploy")
        steps = list(_steps(_get(deploy, "Body")[1]))
        allocations = [s for s in steps if _is_allocation(s[1])]
        if len(allocations) != 1:
            raise refuse(path, "deploy has %d steps that set $.subnetCidr "
                         "from getAvailableCidr(...), not one"
                         % len(allocations))
        self.allocation = allocations[0]
        after = self.allocation[1].start_mark.index
        pushes = [s for s in steps if _is_push(s[1])]
        if len(pushes) != 1 or pushes[0][1].start_mark.index < after:
            raise refuse(path, "deploy has %d stack pushes after its "
                         "allocation, not one" % sum(
                              p[1].start_mark.index > after for p in pushes))
        self.push = pushes[0]
        if any(seq.flow_style for seq, _i in (self.allocation, self.push)):
            raise refuse(path, "deploy's steps are in flow style")
        self.deploy_key, self.deploy = deploy_key, deploy
        _k, self.destroy = _get(methods, ".destroy")
        if self.destroy is not None and not _mentions(self.destroy,
                                                      RELEASE_CALL):
            raise refuse(path, "NeutronNetwork has a .destroy of its own; "
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

    def insertions(self, parts, guarded=True):
        """Return ``{line index: [new lines]}``, inserted after the line."""
        added = {}
        if "flag" in parts:
            seq, item = self.allocation
            added.setdefault(_last_line(item), []).extend(
                _flag_block(" " * seq.start_mark.column))
        if "confirm" in parts:
            seq, item = self.push
            added.setdefault(_last_line(item), []).extend(
                _confirm_block(" " * seq.start_mark.column, guarded))
        if "destroy" in parts:
            pad = " " * self.deploy_key.start_mark.column
            added.setdefault(_last_line(self.deploy), []).extend(
                _destroy_block(pad, guarded))
        return added


def _flag_block(pad):
    return [pad + _FLAG_NOTE, pad + "- $.setAttr(%s, true)" % FLAG]


def _confirm_block(pad, guarded=True):
    test = "$.getAttr(%s, false)" % FLAG
    if guarded:
        test += " and " + HAS_METHOD % "confirmCidr"
    return [pad + _CONFIRM_NOTE, pad + "- If: " + test, pad + "  Then:",
            pad + "    - %s.confirmCidr(id($))" % _EXPLORER]


def _destroy_block(pad, guarded=True):
    call = "%s.releaseCidr(id($))" % _EXPLORER
    body = ([pad + "    - If: " + HAS_METHOD % "releaseCidr",
             pad + "      Then:", pad + "        - " + call]
            if guarded else [pad + "    - " + call])
    return ["", pad + ".destroy:", pad + "  Body:",
            pad + "    " + _DESTROY_NOTE] + body


def _newline(text):
    return "\r\n" if "\r\n" in text else "\n"


def insert(text, added):
    """Return ``text`` with the lines of :meth:`Plan.insertions` added.

    Each line ends as the file's lines do; a file that ends without a line
    end still does.
    """
    newline = _newline(text)
    lines = text.splitlines(True)
    for index in sorted(added, reverse=True):
        new = [line + newline for line in added[index]]
        if not lines[index].endswith(("\n", "\r")):
            # NOTE: after an unterminated last line; the file still ends
            # without a line end, so that revert() gives it back exactly.
            lines[index] += newline
            new[-1] = new[-1][:-len(newline)]
        lines[index + 1:index + 1] = new
    return "".join(lines)


def _blocks(guarded):
    """The blocks a change adds, as functions of their padding."""
    return [_flag_block, lambda pad: _confirm_block(pad, guarded),
            lambda pad: _destroy_block(pad, guarded)]


def _remove(text, guarded):
    """Remove each block of one form from ``text``; return it and a count."""
    lines = text.splitlines(True)
    found = 0
    for block in _blocks(guarded):
        template = block("")
        note = next(i for i, line in enumerate(template) if _NOTE % "" in line)
        indent = len(template[note]) - len(template[note].lstrip(" "))
        for i, line in enumerate(lines):
            content = line.rstrip("\r\n")
            lead = len(content) - len(content.lstrip(" "))
            if not content.lstrip(" ").startswith(_NOTE % "") or lead < indent:
                continue
            expected = block(" " * (lead - indent))
            start, end = i - note, i - note + len(expected)
            if start < 0 or [x.rstrip("\r\n")
                             for x in lines[start:end]] != expected:
                continue
            if not lines[end - 1].endswith(("\n", "\r")) and start > 0:
                lines[start - 1] = lines[start - 1].rstrip("\r\n")
            del lines[start:end]
            found += 1
            break
    return "".join(lines), found


def original(target, text):
    """Return ``(text without the change, guarded)`` for a change of ours.

    ``guarded`` is None if ``text`` has no complete change exactly as
    :meth:`Plan.insertions` makes it (in this form, or the unguarded form
    of an earlier murano-cidr); the text is then returned as it is.

    :raises murano_cidr.operator.errors.UnexpectedCoreLibrary: if the text
        without the change is no longer a ``NeutronNetwork`` it fits.
    """
    for guarded in (True, False):
        before, found = _remove(text, guarded)
        if found != len(PARTS):
            continue
        plan = Plan(target, before)
        if (plan.missing() == list(PARTS) and insert(
                before, plan.insertions(list(PARTS), guarded)) == text):
            return before, guarded
    return text, None


def unguarded(text):
    """Return the explorer calls ``text`` makes without the guard."""
    return [call for call in ("confirmCidr", "releaseCidr")
            if "." + call + "(" in text and HAS_METHOD % call not in text]
