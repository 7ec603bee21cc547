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

"""A JSON file read one item at a time, in bounded memory.

Import files of millions of rows are a JSON list (what ``murano-cidr list
--format json`` and ``convert-openstack`` write) or JSON Lines (one value
per line). Python's :mod:`json` decodes every item
(:meth:`json.JSONDecoder.raw_decode`); this module only steps over the
list's brackets and commas and the white space between items, so memory
holds a read buffer and one item, not the file.
"""

import json
import re

from murano_cidr.operator import errors

#: Characters of the file read ahead of the item being decoded.
WINDOW = 1024 * 1024
#: The largest single value, in characters: a JSON list's item, or a
#: value that is not a list (e.g. ``{"allocations": [...]}``), read whole.
MAX_VALUE = 256 * 1024 * 1024

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class _Reader(object):
    """A window on a text stream, with the line numbers of what it held."""

    def __init__(self, path, text):
        self.path = path
        self._text = text
        self.buffer = ""
        self.pos = 0
        self._eof = False
        # The buffer's offset in the text; a position already counted, its
        # line and the offset where that line starts.
        self._base = 0
        self._mark = 0
        self._line = 1
        self._start = 0

    def _fill(self, ahead):
        """Read until ``ahead`` characters follow :attr:`pos`, or the end."""
        if self.pos > WINDOW:
            self.where(self.pos)
            self._base += self.pos
            self.buffer, self.pos = self.buffer[self.pos:], 0
        while not self._eof and len(self.buffer) - self.pos < ahead:
            try:
                chunk = self._text.read(max(WINDOW, ahead))
            except UnicodeDecodeError as e:
                raise errors.InvalidInputFile(
                    path=self.path, reason="is not UTF-8 text (%s)" % e)
            self._eof = not chunk
            self.buffer += chunk

    def where(self, pos):
        """Return ``(line, column)`` of a position in the buffer, from 1.

        Positions asked for only move forward: lines are counted once.
        """
        counted = max(0, self._mark - self._base)
        pos = max(pos, counted)
        ends = self.buffer.count("\n", counted, pos)
        if ends:
            self._line += ends
            self._start = (self._base +
                           self.buffer.rfind("\n", counted, pos) + 1)
        self._mark = self._base + pos
        return self._line, self._mark - self._start + 1

    def peek(self):
        """Skip white space; return the next character, or ``""``."""
        self._fill(1)
        self.pos = _SPACE.match(self.buffer, self.pos).end()
        while self.pos == len(self.buffer) and not self._eof:
            self._fill(1)
            self.pos = _SPACE.match(self.buffer, self.pos).end()
        return self.buffer[self.pos:self.pos + 1]

    def error(self, pos, message):
        line, column = self.where(pos)
        return errors.InvalidInputFile(
            path=self.path, reason="line %d column %d: is not valid JSON "
            "(%s)" % (line, column, message))

    def decode(self):
        """Decode the value after :attr:`pos` and step over it."""
        self.peek()
        ahead = WINDOW
        while True:
            self._fill(ahead)
            try:
                value, end = _DECODER.raw_decode(self.buffer, self.pos)
            except RecursionError:
                raise errors.InvalidInputFile(
                    path=self.path, reason="nests arrays or objects too "
                    "deeply to be read; the files murano-cidr reads are "
                    "flat lists")
            except json.JSONDecodeError as e:
                # A value cut by the window's end fails near that end, or
                # where a string it cut starts; one that fails further
                # back is wrong, however the file goes on.
                if self._eof or (e.pos < len(self.buffer) - WINDOW and
                                 not e.msg.startswith("Unterminated")):
                    raise self.error(e.pos, e.msg)
            else:
                # A number may go on past the window's end.
                if end < len(self.buffer) or self._eof:
                    self.pos = end
                    return value
            if len(self.buffer) - self.pos > MAX_VALUE:
                raise errors.InvalidInputFile(
                    path=self.path, reason="holds a JSON value larger than "
                    "%d characters; write a list of objects, or one object "
                    "per line" % MAX_VALUE)
            ahead = 2 * (len(self.buffer) - self.pos)


def items(path, text):
    """Yield the items of a JSON list, or the values of JSON Lines.

    :param path: the file's name, for errors.
    :param text: the file's text stream.
    :returns: an iterator of ``(where, value)``: ``where`` is ``item N``
        (from 1) for the items of a list, ``line N`` for each value of a
        file that is not a list (JSON Lines, one value per line, or a
        single value).
    :raises murano_cidr.operator.errors.InvalidInputFile: naming the line and
        column of a syntax error, for text that is not UTF-8, values
        nested too deeply, or a single value larger than
        :data:`MAX_VALUE`.
    """
    reader = _Reader(path, text)
    first = reader.peek()
    if not first:
        raise reader.error(reader.pos, "Expecting value")
    if first != "[":
        while first:
            yield "line %d" % reader.where(reader.pos)[0], reader.decode()
            first = reader.peek()
        return
    reader.pos += 1
    number = 0
    if reader.peek() == "]":
        reader.pos += 1
    else:
        while True:
            number += 1
            yield "item %d" % number, reader.decode()
            following = reader.peek()
            if following == "]":
                reader.pos += 1
                break
            if following != ",":
                raise reader.error(reader.pos, "Expecting ',' delimiter")
            reader.pos += 1
            # A "]" after a comma fails in decode(), as json says.
    if reader.peek():
        raise reader.error(reader.pos, "Extra data")
