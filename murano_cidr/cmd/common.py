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

"""What every murano-cidr console script shares: errors and exit codes.

Exit codes:

* ``0`` success;
* ``1`` the operation failed (for example, the pool is exhausted);
* ``2`` bad usage or configuration, or a database not synced to this
  code's schema (``murano-cidr-manage db sync`` fixes it);
* ``3`` a database or lock service is unavailable;
* ``4`` the SQLite database cannot be written: its file system is mounted
  read-only, or the file or its directory is not writable by this user;
* ``5`` the SQLite database's file system has no space left;
* ``128 + N`` ended by signal N: 130 SIGINT, 143 SIGTERM, 129 SIGHUP.

``murano-cidr-status`` uses oslo.upgradecheck's codes instead (see
:mod:`murano_cidr.cmd.status`).
"""

import argparse
import glob
import logging as std_logging
import os
import re
import sys

from oslo_config import cfg
from oslo_log import log as logging

import murano_cidr
from murano_cidr.cmd import interrupts
from murano_cidr.drivers import commands as driver_commands
from murano_cidr import exceptions
from murano_cidr import messages

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_UNAVAILABLE = 3
#: The SQLite database cannot be written: its file system is read-only
#: or the file is not writable by this user.
EXIT_READ_ONLY = 4
#: The SQLite database's file system has no space left.
EXIT_NO_SPACE = 5


#: Libraries whose routine INFO lines would drown a command's output.
#: oslo.db logs the traceback of the last error when its retries run out,
#: and of every database error its filters do not recognise; the command
#: prints that error on one line, and --debug shows it all.
QUIET_LIBRARIES = ["alembic=WARN", "stevedore=WARN", "tooz=WARN",
                   "matplotlib=WARN", "PIL=WARN", "oslo_db.api=CRITICAL",
                   "oslo_db.sqlalchemy.exc_filters=CRITICAL"]

VERBOSE_OPT = cfg.BoolOpt(
    "verbose", short="v", default=False,
    help="Log what the command does (INFO lines) on standard error. "
    "Without it, or --debug, only warnings and errors are logged.")


#: The usage line of the scripts made of sub-commands.
USAGE = ("%(prog)s [--config-file PATH] [--verbose | --debug] COMMAND "
         "[ARGS]\n       %(prog)s COMMAND --help\n       %(prog)s "
         "--version")


class CommandOpt(cfg.SubCommandOpt):
    """The sub-command option, listed first in ``--help``.

    Without it the list of commands would come last, after every oslo.log
    option, where a user looking for what the program does reads last;
    and the usage line would list every one of those options.
    """

    def _add_to_cli(self, parser, group=None):
        super()._add_to_cli(parser, group)
        # NOTE: neither argparse nor oslo.config has a public way to order
        # the groups of --help: argparse prints them in the order they were
        # made, and SubCommandOpt (oslo.config makes the parser, and calls
        # this method) has just made the commands' group, after the
        # options'. This method is the one place murano-cidr reaches into
        # them (their private SubCommandOpt._add_to_cli and list of groups).
        groups = parser._action_groups
        groups.insert(0, groups.pop())
        # Only now, not through ConfigOpts' usage argument: argparse names
        # the commands' parsers after the usage line their parent had when
        # add_subparsers() was called.
        parser.usage = USAGE


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


def register_logging(conf):
    """Register oslo.log's options with the defaults of a console script.

    Logs go to standard error, so standard output carries only results,
    and chatty libraries log warnings only (:data:`QUIET_LIBRARIES`, set on
    their loggers at once).

    :param conf: the script's :class:`oslo_config.cfg.ConfigOpts`.
    """
    logging.register_options(conf)
    conf.register_cli_opt(VERBOSE_OPT)
    conf.set_default("use_stderr", True)
    logging.set_defaults(default_log_levels=(
        logging.get_default_log_levels() + QUIET_LIBRARIES))
    # NOTE: also before, or without, oslo.log's setup: errors raised while
    # the configuration is read, and murano-cidr-status (which never sets
    # oslo.log up), must not print the libraries' tracebacks either.
    for pair in QUIET_LIBRARIES:
        name, level = pair.split("=")
        std_logging.getLogger(name).setLevel(level)


def setup_logging(conf):
    """Set up oslo.log for a console script, after the command line is read.

    Only warnings and errors are logged, unless ``--verbose`` (INFO) or
    ``--debug`` asks for more; a logging configuration file
    (``--log-config-append``) decides on its own.

    :param conf: the parsed configuration, with :func:`register_logging`'s
        options.
    """
    logging.setup(conf, "murano-cidr")
    if not (conf.debug or conf.verbose or conf.log_config_append):
        std_logging.getLogger().setLevel(std_logging.WARNING)


def parse(conf, argv, prog, description=None):
    """Parse a console script's command line and configuration files.

    Adds ``--version`` (the installed murano-cidr's) and the program's
    description to ``--help``.

    :param conf: the :class:`oslo_config.cfg.ConfigOpts` to parse into.
    :param argv: the arguments, without the program name.
    :param prog: the program name.
    :param description: what the program does, printed first by ``--help``.
    :raises oslo_config.cfg.Error: for a bad command line or file.
    """
    conf(argv, project="murano-cidr", prog=prog,
         version=murano_cidr.__version__, description=description)


def main(prog, command_opt, argv=None, description=None):
    """Run a console script made of oslo.config sub-commands.

    Parses ``argv`` (with ``--config-file`` and the rest of oslo.config's
    options), sets up logging, calls the chosen sub-command's ``action``
    with the configuration and turns errors into one line and an exit code
    (see :func:`run`).

    :param prog: the program name.
    :param command_opt: a :class:`oslo_config.cfg.SubCommandOpt` whose
        parsers set ``action``.
    :param argv: the arguments; ``sys.argv[1:]`` if None.
    :param description: what the program does, for ``--help``.
    :returns: the exit code.
    """
    conf = cfg.ConfigOpts()
    register_logging(conf)
    driver_commands.set_command_defaults(conf)
    conf.register_cli_opt(command_opt)
    argv = sys.argv[1:] if argv is None else argv

    def _run():
        parse(conf, argv, prog, description)
        setup_logging(conf)
        return conf.command.action(conf)

    return run(prog, _run, conf, argv=argv)


def exit_code_for(error):
    """Return the documented exit code for an exception.

    :param error: the exception a command raised.
    :returns: :data:`EXIT_USAGE` for a setup error (bad usage or
        configuration, a missing driver or extra, an unsynced database),
        :data:`EXIT_READ_ONLY` or :data:`EXIT_NO_SPACE` for an SQLite
        database that cannot be written,
        :data:`EXIT_UNAVAILABLE` for an unreachable service,
        :data:`EXIT_FAILED` otherwise.
    """
    if isinstance(error, exceptions.DatabaseReadOnly):
        return EXIT_READ_ONLY
    if isinstance(error, exceptions.DatabaseFull):
        return EXIT_NO_SPACE
    if isinstance(error, (exceptions.InvalidConfig, exceptions.InvalidArgument,
                          exceptions.DriverNotFound,
                          exceptions.DatabaseNotSynced,
                          exceptions.MissingExtra, cfg.Error)):
        return EXIT_USAGE
    if isinstance(error, exceptions.BackendUnavailable):
        return EXIT_UNAVAILABLE
    return EXIT_FAILED


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


def error(message, prog="murano-cidr"):
    """Print a one-line error on standard error.

    :param message: what went wrong and, ideally, what to do about it.
    :param prog: the program name, prefixed to the line.
    """
    print("%s: error: %s" % (prog, messages.one_line(message)),
          file=sys.stderr)


def run(prog, func, conf, debug=False, argv=None, exit_code=exit_code_for):
    """Run ``func()`` and turn any error into one line and an exit code.

    :param prog: the program name, prefixed to error lines.
    :param func: a callable returning an exit code (or None for 0).
    :param conf: the configuration, to read ``debug`` from.
    :param debug: show tracebacks regardless of the configuration.
    :param argv: the command line ``func`` parses, searched for
        ``--debug`` when the configuration cannot say (it failed to
        parse); ``sys.argv[1:]`` if None.
    :param exit_code: ``exit_code(error)`` returns the code of an error;
        :func:`exit_code_for` by default.
    :returns: the exit code.
    """
    def debugging():
        return debug or _debug(conf, argv)

    try:
        with interrupts.handled():
            code = func()
        return EXIT_OK if code is None else code
    except KeyboardInterrupt as e:
        return interrupts.report(prog, e)
    except cfg.Error as e:
        if debugging():
            raise
        print("%s: error: %s" % (prog, describe_config_error(e, conf)),
              file=sys.stderr)
        return exit_code(e)
    except (exceptions.MuranoCidrException, OSError) as e:
        if debugging():
            raise
        print("%s: error: %s" % (prog, messages.one_line(e)), file=sys.stderr)
        return exit_code(e)
    except UnicodeDecodeError as e:
        if debugging():
            raise
        typed = undecodable_config_file(
            e, conf, sys.argv[1:] if argv is None else argv)
        if typed is None:
            return _unexpected(prog, e, exit_code)
        print("%s: error: %s" % (prog, messages.one_line(typed)),
              file=sys.stderr)
        return exit_code(typed)
    except Exception as e:
        if debugging():
            raise
        return _unexpected(prog, e, exit_code)


def _unexpected(prog, e, exit_code):
    print("%s: unexpected error: %s: %s (run with --debug for details)"
          % (prog, type(e).__name__, messages.one_line(e)), file=sys.stderr)
    return exit_code(e)


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
    :returns: a :class:`~murano_cidr.exceptions.InvalidInputFile` naming
        the file, or None if no configuration file fails to decode.
    """
    for path in config_files(conf, argv):
        try:
            with open(path, encoding=error.encoding) as f:
                f.read()
        except UnicodeDecodeError as e:
            return exceptions.InvalidInputFile(
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
    ``--config-dir``, in name order; where the command line gives none,
    the defaults ``conf`` was parsed with.

    :param conf: a :class:`oslo_config.cfg.ConfigOpts` being, or having
        been, parsed; None for no files.
    :param argv: the command line.
    :returns: a list of paths.
    """
    if conf is None:
        return []
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--config-file", action="append")
    parser.add_argument("--config-dir", action="append")
    given, _rest = parser.parse_known_args(list(argv))
    files = list(given.config_file or
                 getattr(conf, "default_config_files", None) or ())
    for directory in (given.config_dir or
                      getattr(conf, "default_config_dirs", None) or ()):
        files.extend(sorted(glob.glob(os.path.join(directory, "*.conf"))))
    return files


def _debug(conf, argv=None):
    """Whether ``--debug`` was asked for, on the command line or in a file.

    The command line is searched too: an error raised before it was parsed
    (or while parsing it) leaves ``conf.debug`` at its default.
    """
    argv = sys.argv[1:] if argv is None else argv
    if "--debug" in argv or "-d" in argv:
        return True
    try:
        return bool(conf.debug)
    except (cfg.NoSuchOptError, cfg.Error, AttributeError):
        return False
