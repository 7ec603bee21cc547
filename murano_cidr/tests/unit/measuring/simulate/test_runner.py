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

"""The simulation runner's checks and configuration (no processes here)."""

import os
import queue

from murano_cidr import exceptions
from murano_cidr.measuring.simulate import model
from murano_cidr.measuring.simulate import runner
from murano_cidr.measuring.simulate import stats
from murano_cidr.operator import confutils
from murano_cidr.operator import errors
from murano_cidr import opts
from murano_cidr.tests import base


class TestSpecValidation(base.TestCase):

    def _validate(self, **kwargs):
        spec = dict(drivers=["legacy"], ks=[2], trials=10,
                    pool={"max_environments": 20})
        spec.update(kwargs)
        return runner.Runner(model.Spec(**spec)).validate()

    def test_returns_pool_size(self):
        self.assertEqual(32, self._validate())
        self.assertEqual(256, self._validate(pool={}))
        self.assertEqual(64, self._validate(
            pool={"pool_cidrs": ["192.168.0.0/18"], "subnet_prefixlen": 24}))

    def test_unknown_driver(self):
        # Issue 32: it blamed [cidr_allocator] driver, which the
        # simulation does not read.
        e = self.assertRaises(exceptions.InvalidArgument, self._validate,
                              drivers=["legacy", "nope"])
        self.assertIn("Invalid driver to simulate 'nope': no allocator "
                      "driver of that name is installed (--drivers); "
                      "installed drivers: ", str(e))
        self.assertIn("legacy", str(e))
        self.assertNotIn("[cidr_allocator]", str(e))

    def test_concurrency_is_bounded(self):
        self.assertEqual(32, self._validate(ks=[runner.MAX_CONCURRENCY]))
        e = self.assertRaises(exceptions.InvalidArgument, self._validate,
                              ks=[2, runner.MAX_CONCURRENCY + 1])
        self.assertIn("at most %d" % runner.MAX_CONCURRENCY, str(e))

    def test_bad_numbers(self):
        self.assertRaises(exceptions.InvalidArgument, self._validate,
                          drivers=[])
        self.assertRaises(exceptions.InvalidArgument, self._validate,
                          ks=[0, 2])
        self.assertRaises(exceptions.InvalidArgument, self._validate, ks=[])
        self.assertRaises(exceptions.InvalidArgument, self._validate,
                          trials=0)

    def test_existing_must_leave_room(self):
        self.assertEqual(32, self._validate(existing=31))
        e = self.assertRaises(exceptions.InvalidArgument, self._validate,
                              existing=32)
        self.assertIn("32 subnets", str(e))

    def test_bad_pool(self):
        e = self.assertRaises(exceptions.InvalidConfig, self._validate,
                              pool={"max_environments": 0})
        self.assertIn("max_environments", str(e))


class TestConfigFile(base.TestCase):

    def test_round_trip(self):
        path = os.path.join(self.state_path, "db.conf")
        spec = model.Spec(
            drivers=["db"], ks=[2], trials=1,
            pool={"pool_cidrs": ["10.0.0.0/20", "10.1.0.0/20"],
                  "subnet_prefixlen": 24, "max_hosts": None},
            config={"cidr_allocator_database": {"connection": "sqlite://"},
                    opts.GROUP: {"coordination_url": "redis://h:1"}})
        runner.write_config(path, "db", spec, "/tmp/state")
        conf = confutils.load(path)
        group = conf[opts.GROUP]
        self.assertEqual("db", group.driver)
        self.assertEqual(["10.0.0.0/20", "10.1.0.0/20"], group.pool_cidrs)
        self.assertEqual(24, group.subnet_prefixlen)
        self.assertEqual(250, group.max_hosts)
        with open(path) as f:
            text = f.read()
        self.assertIn("[cidr_allocator_database]\nconnection = sqlite://",
                      text)
        self.assertIn("coordination_url = redis://h:1", text)
        self.assertIn("state_path = /tmp/state", text)


class TestResult(base.TestCase):

    def test_figures(self):
        r = model.Result("legacy", 10, 200, 32, 16, collided=190)
        self.assertEqual(16, r.free)
        self.assertAlmostEqual(0.95, r.probability)
        low, high = r.interval
        self.assertLess(low, 0.95)
        self.assertGreater(high, 0.95)
        # 1 - 16! / (6! * 16**10)
        self.assertAlmostEqual(0.973571, r.birthday, places=6)
        self.assertIsNone(model.Result("db", 2, 0, 32, 0).probability)

    def test_failed_trials_are_left_out_of_the_probability(self):
        r = model.Result("lock", 2, 10, 32, 0, collided=2, errors=6)
        self.assertEqual(4, r.completed)
        self.assertAlmostEqual(0.5, r.probability)
        self.assertEqual(stats.wilson_interval(2, 4), r.interval)
        failed = model.Result("lock", 2, 5, 32, 0, errors=5)
        self.assertIsNone(failed.probability)
        self.assertEqual((None, None), failed.interval)
        self.assertEqual(0, failed.to_dict()["completed"])


class TestTrial(base.TestCase):
    """One trial's bookkeeping, from the engines' reports."""

    def _record(self, *trials):
        result = model.Result("lock", 2, 0, 32, 0)
        for outcomes in trials:
            result.record(outcomes)
        return result

    def test_failed_trial_is_an_error_not_a_success(self):
        result = self._record(
            [(model.ERROR, "LockUnavailable: down"),
             (model.ERROR, "LockUnavailable: down")],
            [(model.OK, "10.0.0.0/24"), (model.COLLISION, None)],
            [(model.OK, "10.0.0.0/24"), (model.OK, "10.0.1.0/24")])
        self.assertEqual((3, 1, 2, 1, 1),
                         (result.trials, result.errors, result.completed,
                          result.collided, result.refused))
        self.assertAlmostEqual(0.5, result.probability)
        self.assertEqual("LockUnavailable: down", result.first_error)

    def test_collision_beside_an_error_is_not_counted(self):
        result = self._record(
            [(model.COLLISION, None), (model.ERROR, "Boom: x")])
        self.assertEqual((1, 1, 0, 0), (result.trials, result.errors,
                                        result.collided, result.refused))
        self.assertIsNone(result.probability)


class _Process(object):
    """What :func:`runner.collect` reads of an engine's process."""

    def __init__(self, name, alive):
        self.name = name
        self.alive = alive

    def is_alive(self):
        return self.alive


class TestCollect(base.TestCase):

    def test_returns_the_next_report(self):
        results = queue.Queue()
        results.put((1, model.OK, "10.0.0.0/24"))
        self.assertEqual((model.OK, "10.0.0.0/24"),
                         runner.collect(results, [_Process("e", True)]))

    def test_dead_engine_is_a_simulation_error(self):
        workers = [_Process("engine-0", True), _Process("engine-1", False)]
        e = self.assertRaises(errors.SimulationError, runner.collect,
                              queue.Queue(), workers, poll=0.01)
        self.assertEqual("The simulation failed: engine process engine-1 "
                         "died", str(e))

    def test_silent_engines_are_a_simulation_error(self):
        e = self.assertRaises(errors.SimulationError, runner.collect,
                              queue.Queue(), [_Process("e", True)],
                              poll=0.01, timeout=0.05)
        self.assertIn("no engine answered", str(e))
