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

"""The history checker, on histories made by hand."""

import os

import fixtures
from oslotest import base

from murano_cidr import exceptions
from murano_cidr.tests.functional import history

R = "router-1"


def alloc(owner, start, end, cidr=None, status=history.OK, scope=R,
          errors=()):
    return history.make_op(history.ALLOCATE, owner, start, end, status,
                           cidr, scope=scope, errors=errors,
                           error=(list(errors) or ["E"])[0]
                           if status != history.OK else None)


def release(owner, start, end, status=history.OK):
    return history.make_op(history.RELEASE, owner, start, end, status,
                           True if status == history.OK else None)


def kinds(violations):
    return sorted(v.kind for v in violations)


class TestCheckOverlaps(base.BaseTestCase):

    def test_disjoint_allocations_pass(self):
        ops = [alloc("a", 0, 10, "10.0.0.0/24"),
               alloc("b", 1, 11, "10.0.1.0/24")]
        self.assertEqual([], history.check(ops))

    def test_same_cidr_live_at_once_is_flagged(self):
        ops = [alloc("a", 0, 10, "10.0.0.0/24"),
               alloc("b", 20, 30, "10.0.0.0/24")]
        self.assertEqual(["overlap"], kinds(history.check(ops)))
        self.assertEqual(["overlap"],
                         kinds(history.check(ops, strict=False)))

    def test_different_sizes_that_overlap_are_flagged(self):
        ops = [alloc("a", 0, 10, "10.0.0.0/23"),
               alloc("b", 20, 30, "10.0.1.0/24")]
        violations = history.check(ops)
        self.assertEqual(["overlap"], kinds(violations))
        self.assertIn("10.0.0.0/23 of a", str(violations[0]))

    def test_other_scopes_and_no_scope_may_overlap(self):
        ops = [alloc("a", 0, 10, "10.0.0.0/24", scope="r1"),
               alloc("b", 0, 10, "10.0.0.0/24", scope="r2"),
               alloc("c", 0, 10, "10.0.0.0/24", scope=None),
               alloc("d", 0, 10, "10.0.0.0/24", scope=None)]
        self.assertEqual([], history.check(ops))

    def test_reuse_after_the_release_ended_passes(self):
        ops = [alloc("a", 0, 10, "10.0.0.0/24"), release("a", 20, 30),
               alloc("b", 31, 40, "10.0.0.0/24")]
        self.assertEqual([], history.check(ops))
        self.assertEqual([], history.check(ops, strict=False))

    def test_reuse_while_the_release_ran(self):
        # b's allocate started before a's release ended: it could have
        # overlapped (strict), but need not have (the release may have
        # committed first).
        ops = [alloc("a", 0, 10, "10.0.0.0/24"), release("a", 20, 30),
               alloc("b", 25, 40, "10.0.0.0/24")]
        self.assertEqual(["overlap"], kinds(history.check(ops)))
        self.assertEqual([], history.check(ops, strict=False))

    def test_reuse_before_the_release_started_is_flagged(self):
        ops = [alloc("a", 0, 10, "10.0.0.0/24"), release("a", 50, 60),
               alloc("b", 20, 30, "10.0.0.0/24")]
        self.assertEqual(["overlap"],
                         kinds(history.check(ops, strict=False)))

    def test_concurrent_allocates_of_one_cidr_are_flagged(self):
        ops = [alloc("a", 0, 10, "10.0.0.0/24"),
               alloc("b", 5, 15, "10.0.0.0/24")]
        self.assertEqual(["overlap"],
                         kinds(history.check(ops, strict=False)))

    def test_a_failed_release_keeps_the_allocation_live(self):
        ops = [alloc("a", 0, 10, "10.0.0.0/24"),
               release("a", 20, 30, status=history.FAIL),
               alloc("b", 40, 50, "10.0.0.0/24")]
        self.assertEqual(["overlap"], kinds(history.check(ops)))
        # It may have taken effect: not a certain overlap.
        self.assertEqual([], history.check(ops, strict=False))

    def test_a_release_that_never_ended_keeps_the_allocation_live(self):
        ops = [alloc("a", 0, 10, "10.0.0.0/24"),
               release("a", 20, None, status=history.UNKNOWN),
               alloc("b", 40, 50, "10.0.0.0/24")]
        self.assertEqual(["overlap"], kinds(history.check(ops)))


class TestCheckOwners(base.BaseTestCase):

    def test_repeated_allocate_of_one_owner_passes(self):
        ops = [alloc("a", 0, 10, "10.0.0.0/24"),
               alloc("a", 5, 15, "10.0.0.0/24"),
               alloc("a", 20, 30, "10.0.0.0/24")]
        self.assertEqual([], history.check(ops))

    def test_owner_given_two_cidrs_is_flagged(self):
        ops = [alloc("a", 0, 10, "10.0.0.0/24"),
               alloc("a", 20, 30, "10.0.1.0/24")]
        self.assertEqual(["duplicate"], kinds(history.check(ops)))
        self.assertEqual(["duplicate"],
                         kinds(history.check(ops, strict=False)))

    def test_owner_given_another_cidr_after_its_release_passes(self):
        ops = [alloc("a", 0, 10, "10.0.0.0/24"), release("a", 20, 30),
               alloc("a", 40, 50, "10.0.1.0/24")]
        self.assertEqual([], history.check(ops))

    def test_another_cidr_after_a_failed_release_passes(self):
        # The release took effect although its answer was lost.
        ops = [alloc("a", 0, 10, "10.0.0.0/24"),
               release("a", 20, 30, status=history.FAIL),
               alloc("a", 40, 50, "10.0.1.0/24")]
        self.assertEqual([], history.check(ops))


class TestCheckUnknownOutcomes(base.BaseTestCase):

    def test_unknown_allocate_revealed_by_final_state_is_live_forever(self):
        ops = [alloc("a", 0, None, status=history.UNKNOWN),
               alloc("b", 100, 110, "10.0.0.0/24")]
        final = {"a": "10.0.0.0/24", "b": "10.0.0.0/24"}
        self.assertEqual(["overlap"],
                         kinds(history.check(ops, final=final)))
        self.assertEqual(["overlap"], kinds(history.check(
            ops, final=final, strict=False)))

    def test_failed_allocate_that_took_effect_is_live_from_its_start(self):
        ops = [alloc("a", 0, 10, status=history.FAIL),
               alloc("b", 5, 20, "10.0.0.0/24")]
        final = {"a": "10.0.0.0/24", "b": "10.0.0.0/24"}
        self.assertEqual(["overlap"],
                         kinds(history.check(ops, final=final)))

    def test_unknown_allocate_without_a_trace_passes(self):
        ops = [alloc("a", 0, None, status=history.UNKNOWN),
               alloc("b", 100, 110, "10.0.0.0/24")]
        self.assertEqual([], history.check(ops, final={"b": "10.0.0.0/24"}))

    def test_allocation_missing_from_the_final_state_is_lost(self):
        ops = [alloc("a", 0, 10, "10.0.0.0/24"),
               alloc("b", 0, 10, "10.0.1.0/24")]
        final = {"a": "10.0.0.0/24", "b": "10.0.2.0/24"}
        violations = history.check(ops, final=final)
        self.assertEqual(["lost"], kinds(violations))
        self.assertIn("owner b", str(violations[0]))
        self.assertEqual(["lost"], kinds(history.check(ops, final={
            "a": "10.0.0.0/24"})))

    def test_released_allocation_may_be_gone(self):
        ops = [alloc("a", 0, 10, "10.0.0.0/24"),
               release("a", 20, 30, status=history.FAIL)]
        self.assertEqual([], history.check(ops, final={}))


class TestCheckErrors(base.BaseTestCase):

    def test_untyped_error_is_flagged(self):
        ops = [alloc("a", 0, 10, status=history.CRASH,
                     errors=["KeyError", "LookupError"])]
        violations = history.check(ops)
        self.assertEqual(["crash"], kinds(violations))
        self.assertEqual(ops, violations[0].ops)
        self.assertEqual("[crash: untyped error from p#0 allocate(a, "
                         "scope=router-1) -> crash KeyError [0..10]]",
                         repr(violations))

    def test_typed_errors_pass(self):
        ops = [alloc("a", 0, 10, status=history.FAIL,
                     errors=["PoolExhausted", "MuranoCidrException"])]
        self.assertEqual([], history.check(ops))

    def test_allowed_errors_by_class_or_base_class(self):
        ops = [alloc("a", 0, 10, status=history.FAIL,
                     errors=["DatabaseUnavailable", "BackendUnavailable",
                             "MuranoCidrException"]),
               alloc("b", 0, 10, status=history.FAIL,
                     errors=["PoolExhausted", "MuranoCidrException"])]
        self.assertEqual([], history.check(
            ops, allowed_errors={"BackendUnavailable", "PoolExhausted"}))
        violations = history.check(ops, allowed_errors={"PoolExhausted"})
        self.assertEqual(["error"], kinds(violations))
        self.assertIn("DatabaseUnavailable", str(violations[0].ops[0]))


class FakeDriver(object):

    def allocate(self, owner, scope=None):
        if owner == "full":
            raise exceptions.PoolExhausted(pool="10.0.0.0/24", prefixlen=24,
                                           scope=scope, size=1, allocated=1,
                                           taken=0)
        if owner == "bug":
            raise KeyError(owner)
        if owner == "dies":
            raise SystemExit(9)  # as if killed in the middle of the call
        return "10.0.0.0/24"

    def confirm(self, owner):
        pass

    def release(self, owner):
        return True


class TestRecorder(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.driver = FakeDriver()

    def recorder(self, name):
        recorder = history.Recorder(
            os.path.join(self.directory, name + ".jsonl"), name)
        self.addCleanup(recorder.close)
        return recorder

    def test_records_every_outcome(self):
        recorder = self.recorder("p1")
        self.assertEqual("10.0.0.0/24",
                         recorder.allocate(self.driver, "a", scope=R))
        self.assertIsNone(recorder.confirm(self.driver, "a"))
        self.assertTrue(recorder.release(self.driver, "a"))
        self.assertIsNone(recorder.allocate(self.driver, "full", scope=R))
        self.assertIsNone(recorder.allocate(self.driver, "bug", scope=R))
        ops = history.load(self.directory)
        self.assertEqual(recorder.ops, ops)
        self.assertEqual(
            [("allocate", history.OK, "10.0.0.0/24"),
             ("confirm", history.OK, None), ("release", history.OK, True),
             ("allocate", history.FAIL, None),
             ("allocate", history.CRASH, None)],
            [(op.kind, op.status, op.value) for op in ops])
        self.assertEqual(("PoolExhausted", "MuranoCidrException"),
                         ops[3].errors)
        self.assertTrue(ops[3].error.startswith("PoolExhausted: pool "))
        self.assertEqual("KeyError: 'bug'", ops[4].error)
        for earlier, later in zip(ops, ops[1:]):
            self.assertLessEqual(earlier.start, earlier.end)
            self.assertLessEqual(earlier.end, later.start)
        self.assertEqual(["crash"], kinds(history.check(ops)))

    def test_a_call_that_never_ended_is_unknown(self):
        first = self.recorder("p1")
        second = self.recorder("p2")
        first.allocate(self.driver, "a", scope=R)
        self.assertRaises(SystemExit, second.allocate, self.driver, "dies",
                          scope=R)
        ops = history.load(self.directory)
        self.assertEqual([("p1", history.OK), ("p2", history.UNKNOWN)],
                         [(op.process, op.status) for op in ops])
        self.assertIsNone(ops[1].end)
        self.assertEqual([], history.check(ops))

    def test_a_line_cut_short_is_ignored(self):
        recorder = self.recorder("p1")
        recorder.allocate(self.driver, "a", scope=R)
        with open(os.path.join(self.directory, "p1.jsonl"), "a") as f:
            f.write('{"process": "p1", "ind')
        self.assertEqual(recorder.ops, history.load(self.directory))
