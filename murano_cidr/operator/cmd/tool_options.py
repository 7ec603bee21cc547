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

"""The options ``simulate`` and ``bench`` share, spelled the same in both."""

from murano_cidr import measuring

#: What the tools leave on a database they are given, said in ``--help``.
CLEANUP_HELP = (
    " The run works in scopes named murano-cidr-%s-<run>-...; when it "
    "ends, also after an error, Ctrl-C, SIGTERM or SIGHUP, it deletes every "
    "row of those scopes (released ones included) and no other row.")


def add_service_arguments(parser, tool, db_help, coordination_help,
                          repeat=False):
    """Add ``--db-connection`` and ``--coordination-url``.

    :param parser: the command's parser.
    :param tool: ``simulate`` or ``bench``, for the scopes' names.
    :param db_help: what the database URL is used for; what the run leaves
        there (nothing) is added.
    :param coordination_help: what the tooz URL is used for.
    :param repeat: whether ``--db-connection`` may be given more than once
        (a list then).
    """
    parser.add_argument("--db-connection", metavar="URL",
                        action="append" if repeat else "store",
                        help=db_help + CLEANUP_HELP % tool)
    parser.add_argument("--coordination-url", metavar="URL",
                        help=coordination_help)


def add_format_argument(parser):
    """Add ``--format``, one of :data:`murano_cidr.measuring.FORMATS`.

    :param parser: the command's parser.
    """
    parser.add_argument(
        "--format", choices=measuring.FORMATS, default="table",
        help="Output: an aligned table for people (default), JSON with "
        "everything measured and how, or CSV with one row per figure.")
