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

"""Text fit for an operator: one line, printable, no passwords.

Every message murano-cidr prints or logs about an error or a service goes
through these, so an error is always one line, never sends a terminal
control character and a URL never shows its password, whichever command,
driver or tool wrote it.
"""

import re
import shlex

#: What SQLAlchemy appends to a database error's message, one per line:
#: the statement, its parameters and a link. Noise for an operator, and
#: the parameters may be long.
_SQLALCHEMY_DETAIL = ("[SQL:", "[parameters:", "(Background on this error")

#: ``scheme://user:password@host...``; the password runs to the last ``@``,
#: so one holding ``@`` or ``/`` is hidden whole.
_USERINFO = re.compile(r"^(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^:@/?#]*):"
                       r"(?P<password>.*)@(?P<rest>[^@]*)$", re.S)

#: A password given as a query parameter (tooz's Redis driver takes one).
_QUERY_PASSWORD = re.compile(r"(?P<key>[?&](?:password|passwd)=)[^&#]*",
                             re.I)


def one_line(error):
    """Return an error's message on one line.

    oslo.db's errors are read through their inner error; SQLAlchemy's
    statement, parameters and link lines are left out.

    :param error: an exception or a message.
    :returns: its text with every run of white space made one space,
        :func:`printable`; the exception's class name if it is empty.
    """
    text = str(getattr(error, "inner_exception", None) or error)
    lines = [line for line in text.splitlines()
             if not line.strip().startswith(_SQLALCHEMY_DETAIL)]
    return printable(" ".join(" ".join(lines).split())) or type(
        error).__name__


def printable(text):
    """Return ``text`` with every unprintable (C0, C1...) character escaped.

    Echoed paths, owners, ids or a server's text must not forge a line or
    send a terminal an escape sequence: ESC becomes ``\\x1b``.
    """
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


#: Where an exception's hint names the configuration; the process that
#: shows it fills in its own files (:func:`name_configuration`).
CONFIGURATION = "--config-file <file> "


def config_options(conf):
    """Return the options naming the files ``conf`` was read from.

    :returns: e.g. ``"--config-file /etc/murano/murano.conf "`` (an
        engine's are Murano's); ``""`` if none (the tools' search).
    """
    files = getattr(conf, "config_file", None) or []
    dirs = getattr(conf, "config_dir", None) or []
    dirs = [dirs] if isinstance(dirs, str) else dirs
    return "".join(["--config-file %s " % shlex.quote(f) for f in files]
                   + ["--config-dir %s " % shlex.quote(d) for d in dirs])


def name_configuration(text, conf):
    """Return ``text`` with ``conf``'s :func:`config_options` in its hint."""
    return text.replace(CONFIGURATION, config_options(conf))


def clause(error):
    """Return an error's message on one line, to be followed by more text.

    :param error: an exception or a message.
    :returns: :func:`one_line` without a final full stop.
    """
    return one_line(error).rstrip(".")


def safe_url(url):
    """Return a URL fit for messages and logs: its password hidden.

    :param url: a database or coordination URL, as a string or an
        :class:`sqlalchemy.engine.URL`.
    :returns: the URL with ``***`` for the password (in the user part or a
        ``password=`` query parameter).
    """
    # NOTE: a string is not rendered through SQLAlchemy's make_url(): it
    # ends a password at its first "@", so "u:p/w@rd@h" would show
    # "u:***@rd@h" (part of the password); it does not hide a password
    # given as a query parameter (tooz's URLs), and it re-quotes the query
    # ("b:1" becomes "b%3A1"). So on SQLAlchemy 1.4.23 and 2.1. These two
    # expressions are the one place murano-cidr hides passwords in strings.
    text = str(url)
    match = _USERINFO.match(text)
    if match:
        text = "%s:***@%s" % (match.group("head"), match.group("rest"))
    return _QUERY_PASSWORD.sub(r"\g<key>***", text)
