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
:mod:`murano_cidr.operator.cmd.status`).
"""

import logging as std_logging
import sys

from oslo_config import cfg
from oslo_log import log as logging

import murano_cidr
from murano_cidr import exceptions
from murano_cidr import messages
from murano_cidr.operator.cmd import configuration
from murano_cidr.operator.cmd import interrupts
from murano_cidr.operator.drivers import commands as driver_commands
from murano_cidr.operator import errors

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_UNAVAILABLE = 3
#: The SQLite database cannot be written: its file system is read-only
#: or the file is not writable by this user.
EXIT_READ_ONLY = 4
#: The SQLite database's file system has no space left.
EXIT_NO_SPACE = 5

describe_config_error = configuration.describe_config_error
undecodable_config_file = configuration.undecodable_config_file


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


class Commands:
    """The sub-parsers of a script, each named ``PROG COMMAND``.

    argparse names a sub-command's parser after its parent's usage line
    unless told a name, and the scripts' usage line is
    :data:`USAGE`; modules add their commands through this as through
    argparse's sub-parsers.
    """

    def __init__(self, subparsers, prog):
        self._subparsers = subparsers
        self._prog = prog
        subparsers.metavar = "COMMAND"

    def add_parser(self, name, **kwargs):
        """Add a command's parser (see argparse's ``add_parser``)."""
        kwargs.setdefault("prog", "%s %s" % (self._prog, name))
        return self._subparsers.add_parser(name, **kwargs)

    def __getattr__(self, name):
        return getattr(self._subparsers, name)


def sub_commands(prog, add_commands):
    """Return the ``command`` option of a script made of sub-commands.

    :param prog: the program name.
    :param add_commands: ``add_commands(commands)`` adds every command's
        parser to a :class:`Commands`.
    :returns: a :class:`oslo_config.cfg.SubCommandOpt`.
    """
    # NOTE: argparse lists the commands after the options in --help, as it
    # prints groups in the order they were made and oslo.config makes the
    # commands' group last. Listing them first needs a public way to order
    # argparse's groups (or SubCommandOpt to accept the group to add its
    # sub-parsers to); the scripts' descriptions name the commands instead.
    return cfg.SubCommandOpt(
        "command", title="Commands", help="the command to run",
        handler=lambda subparsers: add_commands(Commands(subparsers, prog)))


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


def parse(conf, argv, prog, description=None, usage=None):
    """Parse a console script's command line and configuration files.

    Adds ``--version`` (the installed murano-cidr's), the program's
    description and the configuration files searched to ``--help`` (see
    :func:`murano_cidr.operator.cmd.configuration.parse`).

    :param conf: the :class:`oslo_config.cfg.ConfigOpts` to parse into.
    :param argv: the arguments, without the program name.
    :param prog: the program name.
    :param description: what the program does, printed first by ``--help``.
    :param usage: the usage line; argparse's if None.
    :raises oslo_config.cfg.Error: for a bad command line or file.
    """
    configuration.parse(conf, argv, prog, description=description,
                        usage=usage, version=murano_cidr.__version__)


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
    conf.register_cli_opt(command_opt)
    argv = sys.argv[1:] if argv is None else argv

    def _run():
        parse(conf, argv, prog, description, usage=USAGE)
        # Only now: --version and --help exit in parse() and need no driver.
        driver_commands.set_command_defaults(conf, configured_only=True)
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
                          errors.MissingExtra, cfg.Error)):
        return EXIT_USAGE
    if isinstance(error, exceptions.BackendUnavailable):
        return EXIT_UNAVAILABLE
    return EXIT_FAILED


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
        print("%s: error: %s" % (prog,
                                 configuration.describe_config_error(e, conf)),
              file=sys.stderr)
        return exit_code(e)
    except (exceptions.MuranoCidrException, OSError) as e:
        if debugging():
            raise
        print("%s: error: %s" % (prog, messages.name_configuration(
            messages.one_line(e), conf)), file=sys.stderr)
        return exit_code(e)
    except UnicodeDecodeError as e:
        if debugging():
            raise
        typed = configuration.undecodable_config_file(
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
