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

"""Which configuration files the console scripts read, and their errors.

Without ``--config-file`` or ``--config-dir``, a script reads every file of
:data:`SEARCH_FILES` that exists, then the ``*.conf`` files of every
directory of :data:`SEARCH_DIRS` that exists, in that order; a value in a
later file wins. Murano's own file comes first, so the tools see the driver
an engine host configured there.
"""

import argparse
import glob
import os
import re

from oslo_config import cfg

from murano_cidr import messages
from murano_cidr.operator import errors

#: The configuration files searched when none is given, in order.
SEARCH_FILES = ("/etc/murano/murano.conf",
                "/etc/murano-cidr/murano-cidr.conf",
                "~/.murano-cidr/murano-cidr.conf")
#: The configuration directories searched when none is given, in order,
#: after :data:`SEARCH_FILES`.
SEARCH_DIRS = ("/etc/murano/murano.conf.d",
               "/etc/murano-cidr/murano-cidr.conf.d")


def default_files():
    """Return the files of :data:`SEARCH_FILES` that exist, in order."""
    found = (os.path.expanduser(path) for path in SEARCH_FILES)
    return [path for path in found if os.path.isfile(path)]


def default_dirs():
    """Return the directories of :data:`SEARCH_DIRS` that exist, in order."""
    found = (os.path.expanduser(path) for path in SEARCH_DIRS)
    return [path for path in found if os.path.isdir(path)]


def search_help():
    """Return the sentence of ``--help`` that lists the files searched."""
    return ("Without --config-file or --config-dir, these are read if they "
            "exist, in order, a later value winning: %s, then the *.conf "
            "files of %s." % (", ".join(SEARCH_FILES),
                              ", ".join(SEARCH_DIRS)))


def parse(conf, argv, prog, description=None, usage=None, version=None):
    """Parse a command line and the configuration files it names.

    Where it names none, the files of :func:`default_files` and
    :func:`default_dirs` are read.

    :param conf: the :class:`oslo_config.cfg.ConfigOpts` to parse into.
    :param argv: the arguments, without the program name.
    :param prog: the program name.
    :param description: what the program does, printed first by ``--help``.
    :param usage: the usage line of ``--help``; argparse's if None.
    :param version: what ``--version`` prints; no ``--version`` if None.
    :raises oslo_config.cfg.Error: for a bad command line or file.
    :raises murano_cidr.operator.errors.InvalidInputFile: for a configuration
        file that cannot be read (a directory, no permission).
    """
    # NOTE: oslo.config's --config-file replaces its default files only,
    # and --config-dir its default directories only; either replaces the
    # whole search here, as --help says.
    given = any(_given(argv))
    try:
        conf(argv, project="murano-cidr", prog=prog, version=version,
             description=description, usage=usage, epilog=search_help(),
             default_config_files=[] if given else default_files(),
             default_config_dirs=[] if given else default_dirs())
    except OSError as e:
        if e.filename is None:
            raise
        reason = ("is a directory: --config-file takes a file, --config-dir "
                  "a directory of *.conf files"
                  if isinstance(e, IsADirectoryError)
                  else "cannot be read: %s" % e.strerror)
        raise errors.InvalidInputFile(path=e.filename, reason=reason)


def _given(argv):
    """Return the ``--config-file`` and ``--config-dir`` lists of argv."""
    # NOTE: no abbreviations: "--co" is not ours to refuse (it may be the
    # abbreviation of a command's own option, for oslo.config to judge).
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--config-file", action="append", default=[])
    parser.add_argument("--config-dir", action="append", default=[])
    given, _rest = parser.parse_known_args(list(argv))
    return given.config_file, given.config_dir


#: oslo.config's text for a value of the wrong type; it names the option,
#: not its group, and shows the location as a LocationInfo repr.
#: NOTE: ConfigFileValueError (and ConfigSourceValueError) carry the
#: option, its location and the reason in this English text alone, with no
#: attribute for any of them (oslo.config 8.7.1 to 10.7), so
#: describe_config_error() reads it; these two expressions are the one
#: place murano-cidr reads an oslo.config message.
_VALUE_ERROR = re.compile(r"^Value for option (?P<option>\S+)"
                          r"(?: from (?P<location>.*?))? is not valid: "
                          r"(?P<reason>.*)$", re.S)
_LOCATION_DETAIL = re.compile(r"detail='(?P<detail>[^']+)'")


def describe_config_error(error, conf=None):
    """Return an oslo.config error as one line an operator can act on.

    A bad option value becomes ``option NAME in [GROUP]: REASON (FILE)``
    instead of oslo.config's text with a ``LocationInfo(...)`` repr; other
    errors are returned on one line, unchanged.

    :param error: an :class:`oslo_config.cfg.Error`.
    :param conf: the configuration it came from, to find the option's
        group; the group is left out if None or not found.
    :returns: a one-line message.
    """
    text = messages.one_line(error)
    match = (_VALUE_ERROR.match(text)
             if isinstance(error, cfg.ConfigSourceValueError) else None)
    if match is None:
        return text
    option = match.group("option")
    group = _group_of(conf, option) if conf is not None else None
    line = ("option %s in [%s]: %s" % (option, group, match.group("reason"))
            if group else "option %s: %s" % (option, match.group("reason")))
    detail = _LOCATION_DETAIL.search(match.group("location") or "")
    if detail:
        line += " (%s)" % detail.group("detail")
    return line


def _group_of(conf, option):
    """Return the group whose ``option`` cannot be read, or None."""
    try:
        keys = list(conf)
    except cfg.Error:
        return None
    for key in keys:
        try:
            value = conf[key]
        except cfg.ConfigSourceValueError:
            if key == option:
                return "DEFAULT"
            continue
        except cfg.Error:
            continue
        if not isinstance(value, cfg.ConfigOpts.GroupAttr) or (
                option not in value):
            continue
        try:
            value[option]
        except cfg.ConfigSourceValueError:
            return key
        except cfg.Error:
            continue
    return None


def undecodable_config_file(error, conf=None, argv=()):
    """Name the configuration file a decoding error was raised reading.

    oslo.config reads its files as text and lets a
    :class:`UnicodeDecodeError` escape without saying which file it was;
    the files it reads for ``argv`` are read again, in the error's
    encoding, to find the one.

    :param error: a :class:`UnicodeDecodeError`.
    :param conf: the :class:`oslo_config.cfg.ConfigOpts` that was parsing
        ``argv``; None if there was none.
    :param argv: its command line.
    :returns: a :class:`~murano_cidr.operator.errors.InvalidInputFile` naming
        the file, or None if no configuration file fails to decode.
    """
    for path in config_files(conf, argv):
        try:
            with open(path, encoding=error.encoding) as f:
                f.read()
        except UnicodeDecodeError as e:
            return errors.InvalidInputFile(
                path=path,
                reason="is not a configuration file: it is not %s text "
                "(byte 0x%02x cannot be decoded)"
                % (e.encoding, e.object[e.start]))
        except OSError:
            continue
    return None


def config_files(conf, argv):
    """Return the configuration files oslo.config reads for ``argv``.

    Those of ``--config-file``, then the ``*.conf`` files of each
    ``--config-dir``, in name order; where the command line gives neither,
    the defaults ``conf`` was parsed with.

    :param conf: a :class:`oslo_config.cfg.ConfigOpts` being, or having
        been, parsed; None for no files.
    :param argv: the command line.
    :returns: a list of paths.
    """
    if conf is None:
        return []
    files, dirs = _given(argv)
    if not (files or dirs):
        files = getattr(conf, "default_config_files", None) or []
        dirs = getattr(conf, "default_config_dirs", None) or []
    files = list(files)
    for directory in dirs:
        files.extend(sorted(glob.glob(os.path.join(directory, "*.conf"))))
    return files
