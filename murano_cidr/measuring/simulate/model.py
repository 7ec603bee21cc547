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


"""What a simulation runs, and what it measured."""

import dataclasses
import typing

from murano_cidr.measuring.simulate import stats

#: The outcomes an engine reports for one deployment.
OK = "ok"
COLLISION = "collision"
ERROR = "error"


@dataclasses.dataclass
class Spec(object):
    """What to simulate.

    :ivar drivers: driver names, in output order.
    :ivar ks: the numbers of concurrent engines to try.
    :ivar trials: trials per driver and K.
    :ivar pool: ``[cidr_allocator]`` pool options (see :data:`POOL_OPTIONS`);
        options left out keep their defaults.
    :ivar existing: networks already on the router before each trial.
    :ivar seed: seeds the existing networks, owner and router ids and the
        workers' hash salts; the ``random`` driver draws from the operating
        system and is never reproducible.
    :ivar config: extra configuration, ``{group: {option: value}}``, given
        to every driver (database URL, coordination URL...).
    """

    drivers: typing.List[str]
    ks: typing.List[int]
    trials: int
    pool: typing.Dict[str, typing.Any] = dataclasses.field(
        default_factory=dict)
    existing: int = 0
    seed: typing.Optional[int] = None
    config: typing.Dict[str, typing.Dict[str, typing.Any]] = (
        dataclasses.field(default_factory=dict))


@dataclasses.dataclass
class Result(object):
    """What one driver did at one K.

    A trial in which an engine failed says nothing about collisions (the
    failed engine never plugged its subnet in), so it is counted in
    :attr:`errors` only and left out of :attr:`probability`.

    :ivar trials: trials run, failed ones included.
    :ivar collided: completed trials in which at least one subnet was
        refused.
    :ivar refused: subnets refused by the router, over completed trials.
    :ivar errors: trials in which an engine raised instead of allocating,
        plugging or confirming.
    :ivar first_error: the first such error's message.
    """

    driver: str
    k: int
    trials: int
    pool_size: int
    existing: int
    collided: int = 0
    refused: int = 0
    errors: int = 0
    first_error: typing.Optional[str] = None

    @property
    def free(self):
        """Free slots each engine chooses from."""
        return self.pool_size - self.existing

    @property
    def completed(self):
        """Trials that ran to the end, the ones collisions are counted in."""
        return self.trials - self.errors

    @property
    def probability(self):
        """The measured collision probability, None if no trial completed."""
        if not self.completed:
            return None
        return self.collided / self.completed

    @property
    def interval(self):
        """The 95 % Wilson interval of :attr:`probability`.

        ``(None, None)`` if no trial completed.
        """
        if not self.completed:
            return (None, None)
        return stats.wilson_interval(self.collided, self.completed)

    @property
    def birthday(self):
        """The birthday bound for uniform picks among the free slots."""
        return stats.birthday_bound(self.k, self.free)

    def record(self, outcomes):
        """Count one trial from what its K engines reported.

        A trial in which an engine failed is an error, never a trial
        without collision: the failed engine plugged no subnet in.

        :param outcomes: ``(outcome, detail)`` per engine, outcome among
            :data:`OK`, :data:`COLLISION` and :data:`ERROR`, detail the
            CIDR or the error's text.
        :returns: the first error's text, or None.
        """
        self.trials += 1
        errors = [detail for outcome, detail in outcomes if outcome == ERROR]
        if errors:
            self.errors += 1
            if self.first_error is None:
                self.first_error = errors[0]
            return errors[0]
        refused = sum(1 for outcome, _ in outcomes if outcome == COLLISION)
        self.refused += refused
        if refused:
            self.collided += 1
        return None

    def to_dict(self):
        """Return the result, with the derived figures, for JSON/CSV."""
        low, high = self.interval
        return {"driver": self.driver, "k": self.k, "trials": self.trials,
                "completed": self.completed, "pool_size": self.pool_size,
                "existing": self.existing, "free": self.free,
                "collided": self.collided,
                "refused": self.refused, "errors": self.errors,
                "probability": self.probability, "ci95_low": low,
                "ci95_high": high, "birthday_bound": self.birthday,
                "first_error": self.first_error}
