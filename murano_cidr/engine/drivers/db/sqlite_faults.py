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

"""Why an SQLite database file cannot be used: the file system, named.

SQLite reports a database file it cannot write in words that mislead an
operator: on a file system remounted read-only, a database in WAL mode
cannot even be read ("unable to open database file", which oslo.db takes
for a database that does not exist), and a full file system comes out as
"disk I/O error" (SQLite cannot grow its shared-memory file). When SQLite
fails to open, read or write a file, the file system of the database is
looked at (:func:`os.statvfs`, :func:`os.access`) and the cause named:

* read-only (mounted so, or not writable by this user):
  :class:`~murano_cidr.exceptions.DatabaseReadOnly`;
* no space left: :class:`~murano_cidr.exceptions.DatabaseFull`.

Anything else is left to the caller's generic error.
"""

import os
import sqlite3

from oslo_log import log as logging

from murano_cidr.engine.drivers.db import sqlite_writer
from murano_cidr import exceptions
from murano_cidr import messages

LOG = logging.getLogger(__name__)

#: SQLite's primary result codes of a file it cannot open, read or write:
#: SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN.
FILE_ERRORS = frozenset({8, 10, 13, 14})

#: Less free space than this (bytes) counts as a full file system: SQLite
#: needs a few pages for its journal and shared-memory files.
LOW_SPACE = 256 * 1024


def sqlite_error(error):
    """Return the :class:`sqlite3.Error` inside an oslo.db error, or None.

    :param error: an oslo.db or SQLAlchemy error (or a plain one).
    """
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, sqlite3.Error):
            return error
        seen.add(id(error))
        error = (getattr(error, "orig", None)
                 or getattr(error, "inner_exception", None)
                 or error.__cause__ or error.__context__)
    return None


def diagnose(url, safe_url, error):
    """Name the file system's fault behind an SQLite error, if it is one.

    :param url: the database URL.
    :param safe_url: the URL for the message.
    :param error: the error raised using it (or None).
    :returns: a :class:`~murano_cidr.exceptions.DatabaseReadOnly` or
        :class:`~murano_cidr.exceptions.DatabaseFull`, or None when the
        URL names no file, the error is not a file error of SQLite's, or
        the file system shows no such cause.
    """
    path = sqlite_writer.sqlite_file(url)
    failure = sqlite_error(error)
    if path is None or failure is None:
        return None
    code = getattr(failure, "sqlite_errorcode", None)
    if code is not None and code & 0xff not in FILE_ERRORS:
        return None
    directory = os.path.dirname(os.path.abspath(path))
    reason = messages.one_line(failure)
    try:
        stat = os.statvfs(directory)
    except OSError:
        return None
    if stat.f_flag & os.ST_RDONLY:
        return exceptions.DatabaseReadOnly(
            url=safe_url, path=directory, reason=reason,
            cause="%s is on a file system mounted read-only" % directory)
    free = stat.f_bavail * stat.f_frsize
    if free < LOW_SPACE:
        return exceptions.DatabaseFull(url=safe_url, path=directory,
                                       free=free, reason=reason)
    for target in (directory, path):
        if os.path.exists(target) and not os.access(target, os.W_OK):
            return exceptions.DatabaseReadOnly(
                url=safe_url, path=target, reason=reason,
                cause="%s is not writable by this user" % target)
    return None
