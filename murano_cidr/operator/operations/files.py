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

"""Reading the files operators hand to the ``murano-cidr`` commands.

Import and prune files are JSON or CSV; both readers here report where a
problem is (``line 4``, ``item 3``) so an operator can fix the file.
"""

import contextlib
import csv
import io
import json
import os
import select
import stat
import sys

from murano_cidr.operator import errors

#: The largest input file read whole (the listings and live owners of
#: prune and reconcile), in bytes: a cloud with a million networks fits; a
#: mistaken path to a disk image does not get read into memory. An import
#: file is streamed, never held whole
#: (:mod:`~murano_cidr.operator.operations.json_stream` for JSON).
MAX_FILE_SIZE = 256 * 1024 * 1024
#: Bytes read at once: the start of a file, to tell its format, and then
#: each read of a file streamed.
HEAD = 64 * 1024
READ_SIZE = 1024 * 1024

#: The reading end of :func:`signal.set_wakeup_fd`'s pipe while a command
#: ends on signals (:func:`murano_cidr.operator.cmd.interrupts.handled` sets
#: it), or None. A read of a pipe waits on it too: CPython runs a signal's
#: handler between bytecodes, so a signal that comes after its last look and
#: before a blocking read() would otherwise be seen at the next signal only.
signal_fd = None

JSON = "json"
CSV = "csv"
FORMATS = (JSON, CSV)


def read_text(path):
    """Return the text of ``path``, or of standard input for ``-``.

    :param path: a file name, or ``-``.
    :returns: the decoded text.
    :raises murano_cidr.operator.errors.InvalidInputFile: if the file cannot be
        read, is too large or is not UTF-8.
    """
    with open_input(path) as opened:
        return opened.text()


@contextlib.contextmanager
def open_input(path):
    """Open a file, or standard input for ``-``, to be read once.

    :param path: a file name, or ``-``.
    :returns: a context manager yielding an :class:`Input`.
    :raises murano_cidr.operator.errors.InvalidInputFile: if the file cannot be
        opened or read.
    """
    try:
        if path == "-":
            # Unbuffered: :meth:`Input._wait` must not wait for bytes a
            # buffer holds already; nothing read standard input before.
            raw, owned = getattr(sys.stdin.buffer, "raw",
                                 sys.stdin.buffer), False
        else:
            if os.path.isdir(path):
                raise errors.InvalidInputFile(
                    path=path, reason="is a directory, not a file")
            raw, owned = open(path, "rb", buffering=0), True
    except OSError as e:
        raise errors.InvalidInputFile(
            path=path, reason="cannot be read: %s" % (e.strerror or e))
    try:
        yield Input(path, raw)
    finally:
        if owned:
            raw.close()


class Input(io.RawIOBase):
    """A file read once, from its start, counting the bytes read.

    Its first bytes are read at once, to tell JSON from CSV
    (:attr:`first`); reading starts again from them.

    :ivar size: the file's size in bytes, or None if it is not a regular
        file (a pipe).
    :ivar consumed: the bytes read so far.
    :ivar first: the first character that is not white space, or ``""``.
    """

    def __init__(self, path, raw):
        super().__init__()
        self.path = path
        self._raw = raw
        self.consumed = 0
        self._fd = None
        try:
            info = os.fstat(raw.fileno())
            self.size = info.st_size if stat.S_ISREG(info.st_mode) else None
            if self.size is None:
                self._fd = raw.fileno()
        except (OSError, ValueError, io.UnsupportedOperation):
            self.size = None
        self._head = b""
        while True:
            chunk = self._read(HEAD)
            self._head += chunk
            if not chunk or self._head.strip():
                break
        self.first = self._head.decode("utf-8-sig", "replace").lstrip()[:1]

    def _read(self, n):
        try:
            self._wait()
            return getattr(self._raw, "read1", self._raw.read)(n)
        except OSError as e:
            raise errors.InvalidInputFile(
                path=self.path, reason="cannot be read: %s"
                % (e.strerror or e))

    def _wait(self):
        """Wait until a pipe can be read, or a signal comes."""
        wake = signal_fd
        if wake is None or self._fd is None:
            return
        while self._fd not in select.select([self._fd, wake], [], [])[0]:
            # A signal whose handler returned (the one that ends the
            # command raises, above): forget it, wait again.
            try:
                os.read(wake, 512)
            except BlockingIOError:
                pass

    def readable(self):
        return True

    def readinto(self, buffer):
        if self._head:
            data, self._head = (self._head[:len(buffer)],
                                self._head[len(buffer):])
        else:
            data = self._read(len(buffer))
        buffer[:len(data)] = data
        self.consumed += len(data)
        return len(data)

    def text(self):
        """Return the whole text, as :func:`read_text` does."""
        chunks, size = [], 0
        while size <= MAX_FILE_SIZE:
            chunk = self.read(MAX_FILE_SIZE + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        data = b"".join(chunks)
        if size > MAX_FILE_SIZE:
            raise errors.InvalidInputFile(
                path=self.path, reason="is larger than %d bytes"
                % MAX_FILE_SIZE)
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise errors.InvalidInputFile(
                path=self.path, reason="is not UTF-8 text (%s)" % e)

    def lines(self):
        """Return the text as a stream of lines, decoded as it is read.

        Not limited to :data:`MAX_FILE_SIZE`: it is never held whole. A
        byte that is not UTF-8 raises :class:`UnicodeDecodeError` where it
        is read (:func:`iter_csv` reports it).
        """
        return io.TextIOWrapper(io.BufferedReader(self, READ_SIZE),
                                encoding="utf-8-sig", newline="")


def detect_format(path, text, fmt=None):
    """Decide whether a file is JSON or CSV.

    :param path: the file name; a ``.json`` or ``.csv`` suffix decides.
    :param text: the file's text (its start will do); otherwise a leading
        ``[`` or ``{`` means JSON.
    :param fmt: an explicit format, which wins.
    :returns: :data:`JSON` or :data:`CSV`.
    """
    if fmt:
        return fmt
    suffix = os.path.splitext(path)[1].lower().lstrip(".")
    if suffix in FORMATS:
        return suffix
    return JSON if text.lstrip()[:1] in ("[", "{") else CSV


def parse_json(path, text):
    """Parse JSON text.

    :raises murano_cidr.operator.errors.InvalidInputFile: naming the line and
        column of a syntax error, or for arrays and objects nested too
        deeply for Python's parser.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise errors.InvalidInputFile(
            path=path, reason="nests arrays or objects too deeply to be "
            "read; the files murano-cidr reads are flat lists")
    except ValueError as e:
        where = ""
        if isinstance(e, json.JSONDecodeError):
            where = "line %d column %d: " % (e.lineno, e.colno)
            e = e.msg
        raise errors.InvalidInputFile(
            path=path, reason="%sis not valid JSON (%s)" % (where, e))


def parse_csv(path, text, check_header=None):
    """Parse CSV text with a header row.

    :returns: a list of ``(line_number, {column: value})``, as
        :func:`iter_csv` yields them.
    :raises murano_cidr.operator.errors.InvalidInputFile: as :func:`iter_csv`.
    """
    return list(iter_csv(path, io.StringIO(text, newline=""), check_header))


def iter_csv(path, lines, check_header=None):
    """Parse CSV lines with a header row, one row at a time.

    Blank lines and lines starting with ``#`` are ignored. Header names are
    stripped and lowercased.

    :param lines: an iterable of lines, e.g. a text file opened with
        ``newline=""``.
    :param check_header: called with the header's line number and its
        column names, to refuse a header that lacks a column.
    :returns: an iterator of ``(line_number, {column: value})``, values
        stripped.
    :raises murano_cidr.operator.errors.InvalidInputFile: for a CSV syntax
        error, text that is not UTF-8, a missing or repeated header, or a
        row with more cells than the header.
    """
    reader = csv.reader(lines, strict=True)
    header = None
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            raise errors.InvalidInputFile(
                path=path, reason="line %d: is not valid CSV (%s)"
                % (reader.line_num, e))
        except UnicodeDecodeError as e:
            raise errors.InvalidInputFile(
                path=path, reason="is not UTF-8 text (%s)" % e)
        if not any(c.strip() for c in cells):
            continue
        if cells[0].lstrip().startswith("#"):
            continue
        if header is None:
            header = _header(path, reader.line_num, cells, check_header)
            continue
        if len(cells) > len(header):
            raise errors.InvalidInputFile(
                path=path, reason="line %d: %d cells, but the header has %d "
                "columns" % (reader.line_num, len(cells), len(header)))
        cells = [c.strip() for c in cells]
        cells += [""] * (len(header) - len(cells))
        yield reader.line_num, dict(zip(header, cells))
    if header is None:
        raise errors.InvalidInputFile(path=path,
                                      reason="has no header row")


def _header(path, line, cells, check_header):
    header = [h.strip().lower() for h in cells]
    if any(not h for h in header) or len(set(header)) != len(header):
        raise errors.InvalidInputFile(
            path=path, reason="line %d: the header %s must name each column "
            "once" % (line, ",".join(header)))
    if check_header is not None:
        check_header(line, header)
    return header
