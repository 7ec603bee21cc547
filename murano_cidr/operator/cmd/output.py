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

"""Printing results as aligned tables for people or JSON for scripts."""

import json

from murano_cidr import messages

TABLE = "table"
JSON = "json"
FORMATS = (TABLE, JSON)


def add_format_argument(parser):
    """Add ``--format table|json`` to a command's parser."""
    parser.add_argument(
        "--format", choices=FORMATS, default=TABLE,
        help="Output format: an aligned table for people (default) or JSON "
        "for scripts.")


def _cell(value):
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return messages.printable(str(value))


def table(headers, rows):
    """Return rows as aligned text, a header line first.

    :param headers: column titles.
    :param rows: sequences of cells; None prints as ``-``.
    :returns: the text, without a trailing newline.
    """
    cells = [list(headers)] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(row, widths))
                     .rstrip() for row in cells)


def emit(fmt, data, headers=None, rows=None):
    """Print a result as JSON or as a table.

    :param fmt: :data:`JSON` or :data:`TABLE`.
    :param data: what JSON prints.
    :param headers: the table's column titles; no table if None.
    :param rows: the table's rows.
    """
    if fmt == JSON:
        print(json.dumps(data, indent=2, sort_keys=True))
    elif headers is not None:
        print(table(headers, rows or []))
