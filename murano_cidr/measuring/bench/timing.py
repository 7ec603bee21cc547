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
import time


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
