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

import csv
import io
import json
import os
import sys

from murano_cidr import exceptions

#: The largest input file read, in bytes: a cloud with a million networks
#: fits; a mistaken path to a disk image does not get read into memory.
MAX_FILE_SIZE = 256 * 1024 * 1024

JSON = "json"
CSV = "csv"
FORMATS = (JSON, CSV)


def read_text(path):
    """Return the text of ``path``, or of standard input for ``-``.

    :param path: a file name, or ``-``.
    :returns: the decoded text.
    :raises murano_cidr.exceptions.InvalidInputFile: if the file cannot be
        read, is too large or is not UTF-8.
    """
    try:
        if path == "-":
            data = sys.stdin.buffer.read(MAX_FILE_SIZE + 1)
        else:
            if os.path.isdir(path):
                raise exceptions.InvalidInputFile(
                    path=path, reason="is a directory, not a file")
            with open(path, "rb") as f:
                data = f.read(MAX_FILE_SIZE + 1)
    except OSError as e:
        raise exceptions.InvalidInputFile(
            path=path, reason="cannot be read: %s" % (e.strerror or e))
    if len(data) > MAX_FILE_SIZE:
        raise exceptions.InvalidInputFile(
            path=path, reason="is larger than %d bytes" % MAX_FILE_SIZE)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise exceptions.InvalidInputFile(
            path=path, reason="is not UTF-8 text (%s)" % e)


def detect_format(path, text, fmt=None):
    """Decide whether a file is JSON or CSV.

    :param path: the file name; a ``.json`` or ``.csv`` suffix decides.
    :param text: the file's text; otherwise a leading ``[`` or ``{`` means
        JSON.
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

    :raises murano_cidr.exceptions.InvalidInputFile: naming the line and
        column of a syntax error, or for arrays and objects nested too
        deeply for Python's parser.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise exceptions.InvalidInputFile(
            path=path, reason="nests arrays or objects too deeply to be "
            "read; the files murano-cidr reads are flat lists")
    except ValueError as e:
        where = ""
        if isinstance(e, json.JSONDecodeError):
            where = "line %d column %d: " % (e.lineno, e.colno)
            e = e.msg
        raise exceptions.InvalidInputFile(
            path=path, reason="%sis not valid JSON (%s)" % (where, e))


def parse_csv(path, text, check_header=None):
    """Parse CSV text with a header row.

    Blank lines and lines starting with ``#`` are ignored. Header names are
    stripped and lowercased.

    :param check_header: called with the header's line number and its
        column names, to refuse a header that lacks a column.
    :returns: a list of ``(line_number, {column: value})``, values stripped.
    :raises murano_cidr.exceptions.InvalidInputFile: for a CSV syntax error,
        a missing or repeated header, or a row with more cells than the
        header.
    """
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    parsed = []
    try:
        for cells in reader:
            if not any(c.strip() for c in cells):
                continue
            if cells[0].lstrip().startswith("#"):
                continue
            parsed.append((reader.line_num, cells))
    except csv.Error as e:
        raise exceptions.InvalidInputFile(
            path=path, reason="line %d: is not valid CSV (%s)"
            % (reader.line_num, e))
    if not parsed:
        raise exceptions.InvalidInputFile(path=path,
                                          reason="has no header row")
    header_line, header = parsed[0]
    header = [h.strip().lower() for h in header]
    if any(not h for h in header) or len(set(header)) != len(header):
        raise exceptions.InvalidInputFile(
            path=path, reason="line %d: the header %s must name each column "
            "once" % (header_line, ",".join(header)))
    if check_header is not None:
        check_header(header_line, header)
    rows = []
    for n, cells in parsed[1:]:
        if len(cells) > len(header):
            raise exceptions.InvalidInputFile(
                path=path, reason="line %d: %d cells, but the header has %d "
                "columns" % (n, len(cells), len(header)))
        cells = [c.strip() for c in cells]
        cells += [""] * (len(header) - len(cells))
        rows.append((n, dict(zip(header, cells))))
    return rows
