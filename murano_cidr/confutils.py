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

"""Configuration objects built from Python values, through a file.

The simulator's engines and the benchmarks build their configuration from
``{group: {option: value}}``. It goes through a file, the way a service
reads its configuration: ``set_override`` would leak into every
:class:`oslo_config.cfg.ConfigOpts` sharing an option group object.
"""

import os
import tempfile

from oslo_config import cfg

from murano_cidr import opts


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
    opts.register_opts(conf)
    return conf


def make_conf(groups, directory=None):
    """Build a configuration from ``{group: {option: value}}``.

    :param groups: option values by group (see :func:`render`).
    :param directory: where to write the file, which is removed once read
        (the system's temporary directory if None).
    :returns: an :class:`oslo_config.cfg.ConfigOpts` with the
        ``[cidr_allocator]`` options registered.
    :raises oslo_config.cfg.Error: if a value cannot be parsed.
    """
    fd, path = tempfile.mkstemp(prefix="murano-cidr-", suffix=".conf",
                                dir=directory)
    os.close(fd)
    try:
        write(path, groups)
        # NOTE: oslo.config parses the whole file here, every group
        # included, so options registered later (by a driver) still read it.
        return load(path)
    finally:
        os.unlink(path)
