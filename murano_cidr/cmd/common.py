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
* ``2`` bad usage or configuration;
* ``3`` a database or lock service is unavailable.
"""

import sys

from oslo_config import cfg
from oslo_log import log as logging

from murano_cidr import exceptions

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_UNAVAILABLE = 3


#: Libraries whose routine INFO lines would drown a command's output.
#: oslo.db logs the traceback of the last error when its retries run out;
#: the command prints that error on one line, and --debug shows it all.
QUIET_LIBRARIES = ["alembic=WARN", "stevedore=WARN", "tooz=WARN",
                   "oslo_db.api=CRITICAL"]


def register_logging(conf):
    """Register oslo.log's options with the defaults of a console script.

    Logs go to standard error, so standard output carries only results,
    and chatty libraries log warnings only.

    :param conf: the script's :class:`oslo_config.cfg.ConfigOpts`.
    """
    logging.register_options(conf)
    conf.set_default("use_stderr", True)
    logging.set_defaults(default_log_levels=(
        logging.get_default_log_levels() + QUIET_LIBRARIES))


def main(prog, command_opt, argv=None, register=None):
    """Run a console script made of oslo.config sub-commands.

    Parses ``argv`` (with ``--config-file`` and the rest of oslo.config's
    options), sets up logging, calls the chosen sub-command's ``action``
    with the configuration and turns errors into one line and an exit code
    (see :func:`run`).

    :param prog: the program name.
    :param command_opt: a :class:`oslo_config.cfg.SubCommandOpt` whose
        parsers set ``action``.
    :param argv: the arguments; ``sys.argv[1:]`` if None.
    :param register: optional ``register(conf)`` for more options.
    :returns: the exit code.
    """
    conf = cfg.ConfigOpts()
    register_logging(conf)
    if register is not None:
        register(conf)
    conf.register_cli_opt(command_opt)
    argv = sys.argv[1:] if argv is None else argv

    def _run():
        conf(argv, project="murano-cidr", prog=prog)
        logging.setup(conf, "murano-cidr")
        return conf.command.action(conf)

    return run(prog, _run, conf)


def exit_code_for(error):
    """Return the documented exit code for an exception."""
    if isinstance(error, (exceptions.InvalidConfig, exceptions.InvalidArgument,
                          exceptions.DriverNotFound, cfg.Error)):
        return EXIT_USAGE
    if isinstance(error, exceptions.BackendUnavailable):
        return EXIT_UNAVAILABLE
    return EXIT_FAILED


def error(message, prog="murano-cidr"):
    """Print a one-line error on standard error.

    :param message: what went wrong and, ideally, what to do about it.
    :param prog: the program name, prefixed to the line.
    """
    print("%s: error: %s" % (prog, one_line(message)), file=sys.stderr)


def run(prog, func, conf, debug=False):
    """Run ``func()`` and turn any error into one line and an exit code.

    :param prog: the program name, prefixed to error lines.
    :param func: a callable returning an exit code (or None for 0).
    :param conf: the configuration, to read ``debug`` from.
    :param debug: show tracebacks regardless of the configuration.
    :returns: the exit code.
    """
    try:
        code = func()
        return EXIT_OK if code is None else code
    except KeyboardInterrupt:
        print("%s: interrupted" % prog, file=sys.stderr)
        return 130
    except (exceptions.MuranoCidrException, cfg.Error, OSError) as e:
        if debug or _debug(conf):
            raise
        print("%s: error: %s" % (prog, one_line(e)), file=sys.stderr)
        return exit_code_for(e)
    except Exception as e:
        if debug or _debug(conf):
            raise
        print("%s: unexpected error: %s: %s (run with --debug for details)"
              % (prog, type(e).__name__, one_line(e)), file=sys.stderr)
        return EXIT_FAILED


def _debug(conf):
    try:
        return bool(conf.debug)
    except (cfg.NoSuchOptError, cfg.Error, AttributeError):
        return "--debug" in sys.argv[1:] or "-d" in sys.argv[1:]


def one_line(error):
    """Return an error's message on one line.

    :param error: an exception or a message.
    :returns: its text with every run of white space (newlines included)
        made one space; the exception's class name if the text is empty.
    """
    text = str(error) or type(error).__name__
    return " ".join(text.split())
