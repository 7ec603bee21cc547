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

Every message about an error or a service goes through these.
"""

import re
import shlex

#: The lines SQLAlchemy appends to an error: statement, parameters, link.
_SQLALCHEMY_DETAIL = ("[SQL:", "[parameters:", "(Background on this error")

#: ``scheme://user:password@host``; the password runs to the last ``@``.
_USERINFO = re.compile(r"^(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^:@/?#]*):"
                       r"(?P<password>.*)@(?P<rest>[^@]*)$", re.S)

#: A password given as a query parameter (tooz's Redis URLs).
_QUERY_PASSWORD = re.compile(r"(?P<key>[?&](?:password|passwd)=)[^&#]*",
                             re.I)


def one_line(error):
    """Return an error's message (oslo.db's: its inner error's) on one line.

    :returns: its text, SQLAlchemy's detail lines left out, white space
        runs made one space, :func:`printable`; else its class name.
    """
    text = str(getattr(error, "inner_exception", None) or error)
    lines = [line for line in text.splitlines()
             if not line.strip().startswith(_SQLALCHEMY_DETAIL)]
    return printable(" ".join(" ".join(lines).split())) or type(
        error).__name__


def printable(text):
    """Return ``text`` with every unprintable character escaped (``\\x1b``)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


#: The configuration in an exception's hint (:func:`name_configuration`).
CONFIGURATION = "--config-file <file> "


def config_options(conf):
    """Return the options naming the files ``conf`` was read from, or ``""``.

    E.g. ``"--config-file /etc/murano/murano.conf "``.
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
    """Return :func:`one_line` without a final full stop."""
    return one_line(error).rstrip(".")


def safe_url(url):
    """Return a URL (string or SQLAlchemy's) with ``***`` for its password.

    The password in the user part or a ``password=`` query parameter.
    """
    # NOTE: not SQLAlchemy's make_url(), which ends a password at its
    # first "@", misses query passwords and re-quotes the query.
    text = str(url)
    match = _USERINFO.match(text)
    if match:
        text = "%s:***@%s" % (match.group("head"), match.group("rest"))
    return _QUERY_PASSWORD.sub(r"\g<key>***", text)
