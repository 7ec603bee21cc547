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

"""Configuration objects built from Python values, and the files of them.

The simulator's engines and the benchmarks build their configuration from
``{group: {option: value}}``: :func:`make_conf` in the process itself,
:func:`write` and :func:`load` for the simulator's engine processes, which
read a file as a service does.
"""

import glob
import os

from oslo_config import cfg

from murano_cidr import messages
from murano_cidr.operator.drivers import commands


def render(groups):
    """Return the text of a configuration file.

    :param groups: option values by group, ``{group: {option: value}}``;
        lists and tuples are joined with commas, None values left out.
    :returns: the file's text, in INI format.
    """
    lines = []
    for group, values in groups.items():
        lines.append("[%s]" % group)
        for option, value in values.items():
            if value is None:
                continue
            if isinstance(value, (list, tuple)):
                value = ",".join(str(v) for v in value)
            lines.append("%s = %s" % (option, value))
        lines.append("")
    return "\n".join(lines)


def write(path, groups):
    """Write a configuration file (see :func:`render`).

    :param path: the file to write.
    :param groups: option values by group.
    :raises OSError: if the file cannot be written.
    """
    with open(path, "w") as f:
        f.write(render(groups))


def load(path):
    """Read one configuration file, with murano-cidr's options registered.

    :param path: the configuration file.
    :returns: an :class:`oslo_config.cfg.ConfigOpts`.
    :raises oslo_config.cfg.Error: if the file cannot be parsed.
    """
    conf = cfg.ConfigOpts()
    conf([], project="murano-cidr", default_config_files=[path])
    commands.register_opts(conf)
    return conf


def make_conf(groups):
    """Build a configuration from ``{group: {option: value}}``.

    Every installed driver's options are registered and the values set as
    overrides; each :class:`oslo_config.cfg.ConfigOpts` registers groups of
    its own (see :func:`murano_cidr.opts.register_listed`), so overrides
    are never shared between configuration objects. No file is read.

    :param groups: option values by group, as :func:`render` takes them;
        None values are left out.
    :returns: an :class:`oslo_config.cfg.ConfigOpts` with every option
        registered.
    :raises oslo_config.cfg.NoSuchOptError: for an option no installed
        driver has.
    :raises ValueError: if a value does not fit its option's type.
    """
    conf = cfg.ConfigOpts()
    commands.register_opts(conf)
    for group, values in groups.items():
        for option, value in values.items():
            if value is not None:
                conf.set_override(option, value, group=group)
    return conf


def used_files(conf):
    """Return the configuration files a parsed ``conf`` read, as one string.

    :param conf: a parsed :class:`oslo_config.cfg.ConfigOpts`.
    :returns: the files, comma-separated and escaped
        (:func:`murano_cidr.messages.printable`), or ``"no configuration
        file"``.
    """
    files = list(conf.config_file or ())
    for directory in conf.config_dir or ():
        files.extend(sorted(glob.glob(os.path.join(directory, "*.conf"))))
    return messages.printable(", ".join(files)) or "no configuration file"
