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

"""Clocks and percentiles shared by the benchmarks."""

import math
import os
import tempfile
import time

from oslo_config import cfg

from murano_cidr import opts


def percentile(values, fraction):
    """Return a percentile by the nearest-rank method.

    :param values: a non-empty iterable of numbers.
    :param fraction: 0.5 for the median, 0.99 for p99.
    :returns: the smallest value with at least ``fraction`` of the values at
        or below it.
    :raises ValueError: for no values or a fraction outside (0, 1].
    """
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    if not 0.0 < fraction <= 1.0:
        raise ValueError("fraction must be in (0, 1], got %r" % fraction)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def time_call(func, *args, **kwargs):
    """Call ``func`` once and return ``(seconds, result)``."""
    start = time.perf_counter()
    result = func(*args, **kwargs)
    return time.perf_counter() - start, result


def median_time(func, repeat):
    """Return the median duration of ``repeat`` calls of ``func()``.

    :param func: a callable taking no argument.
    :param repeat: how many times to call it (at least 1).
    :returns: seconds.
    """
    return percentile([time_call(func)[0] for _ in range(max(1, repeat))],
                      0.5)


def make_conf(groups, directory=None):
    """Build a configuration from ``{group: {option: value}}``.

    It goes through a file, the way a service reads its configuration, so
    nothing is left in option overrides shared between configuration
    objects.

    :param groups: option values by group; lists are joined with commas.
    :param directory: where to write the file (a temporary one if None).
    :returns: an :class:`oslo_config.cfg.ConfigOpts` with the
        ``[cidr_allocator]`` options registered.
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
    fd, path = tempfile.mkstemp(prefix="murano-cidr-bench-", suffix=".conf",
                                dir=directory)
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(lines) + "\n")
    try:
        conf = cfg.ConfigOpts()
        conf([], project="murano-cidr", default_config_files=[path])
        opts.register_opts(conf)
    finally:
        # NOTE: oslo.config parsed the whole file above, every group
        # included, so options registered later (by a driver) still read it.
        os.unlink(path)
    return conf
