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

"""The statistics the simulator prints beside what it measured.

A trial of the simulator is a Bernoulli experiment: either at least one of
the K concurrent deployments collided, or none did. The measured rate gets a
Wilson score interval, which stays inside [0, 1] and behaves at rates near
0 % and 100 %, where the normal approximation does not. The analytic
reference is the birthday bound: the chance that K independent, uniform
picks among F free slots are not all distinct.
"""

import math

#: The two-sided 95 % quantile of the standard normal distribution.
Z_95 = 1.959963984540054


def wilson_interval(successes, trials, z=Z_95):
    """Return the Wilson score interval of a binomial proportion.

    :param successes: how many trials had the outcome (here: a collision).
    :param trials: how many trials were run.
    :param z: the normal quantile of the confidence level (95 % by default).
    :returns: ``(low, high)``, both within ``[0, 1]``; ``(0.0, 1.0)`` when
        no trial was run.
    :raises ValueError: if the counts are negative or ``successes`` exceeds
        ``trials``.
    """
    if trials < 0 or successes < 0 or successes > trials:
        raise ValueError("need 0 <= successes <= trials, got %r of %r"
                         % (successes, trials))
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    z2 = z * z
    denominator = 1.0 + z2 / trials
    centre = (p + z2 / (2.0 * trials)) / denominator
    half = (z / denominator) * math.sqrt(
        p * (1.0 - p) / trials + z2 / (4.0 * trials * trials))
    # NOTE: at p = 0 (p = 1) the low (high) end is 0 (1) exactly; say so
    # rather than print the rounding noise of the formula.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return (low, high)


def birthday_bound(k, slots):
    """Return the chance that ``k`` uniform picks from ``slots`` collide.

    ``1 - prod_{i<k} (slots - i) / slots``: the collision probability of
    ``k`` engines that each pick uniformly at random among the same
    ``slots`` free candidates, without coordination.

    :param k: the number of concurrent picks.
    :param slots: the number of free candidates.
    :returns: a probability; 0.0 for fewer than two picks, 1.0 when there
        are more picks than slots.
    :raises ValueError: for a negative ``k`` or ``slots``.
    """
    if k < 0 or slots < 0:
        raise ValueError("need k >= 0 and slots >= 0, got %r and %r"
                         % (k, slots))
    if k < 2:
        return 0.0
    if k > slots:
        return 1.0
    distinct = 1.0
    for i in range(k):
        distinct *= (slots - i) / slots
    return 1.0 - distinct


def chance_of_no_event(probability, trials):
    """Return the chance that ``trials`` independent trials never see it.

    :param probability: the chance of the event in one trial.
    :param trials: the number of trials.
    :returns: ``(1 - probability) ** trials``.
    """
    return (1.0 - probability) ** trials


def trials_for_certainty(probability, tolerance):
    """Return how many trials make "never seen" less likely than tolerance.

    :param probability: the chance of the event in one trial, in (0, 1).
    :param tolerance: the acceptable chance of never seeing it, in (0, 1).
    :returns: the smallest ``n`` with ``(1 - probability) ** n < tolerance``.
    :raises ValueError: for a probability or tolerance outside (0, 1).
    """
    if not 0.0 < probability < 1.0 or not 0.0 < tolerance < 1.0:
        raise ValueError("need probability and tolerance in (0, 1)")
    n = math.ceil(math.log(tolerance) / math.log(1.0 - probability))
    while chance_of_no_event(probability, n) >= tolerance:
        n += 1
    return n
