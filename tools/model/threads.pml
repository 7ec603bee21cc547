/*
 *    Licensed under the Apache License, Version 2.0 (the "License"); you may
 *    not use this file except in compliance with the License. You may obtain
 *    a copy of the License at
 *
 *         http://www.apache.org/licenses/LICENSE-2.0
 *
 *    Unless required by applicable law or agreed to in writing, software
 *    distributed under the License is distributed on an "AS IS" BASIS,
 *    WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or
 *    implied. See the License for the specific language governing
 *    permissions and limitations under the License.
 *
 * The db driver's current summary shared by two threads of one engine,
 * for spin: included by cidr.pml with -DTHREADS (instead of summary.pml);
 * see doc/source/contributor/model.rst.
 *
 * What is modelled
 *
 *   One engine process P runs two threads (Thread 0: two networks, Thread
 *   1: one) that allocate at the same time in one scope, sharing one
 *   search.Summaries; another engine process Q allocates one network
 *   there. P's summaries are objects (search.Summary: the candidates it
 *   blocks, its generation or None, its pending generations): the one
 *   Summaries keeps, and the ones a thread read in full and holds until
 *   its settle. Each thread does what summary.pml's engines do
 *   (placing.lock_and_insert with Summaries.get and Summary.draw before
 *   the lock, or lock_scope first; insert_in_scope with its own
 *   Summaries.get, is_current, the checked or unchecked insert, block,
 *   learn, read_summary; rollbacks; a lost commit answer), on the object
 *   it got. Once committed, and maybe after the other thread's settle (a
 *   thread may be descheduled between its commit and its settle), it
 *   settles as DbDriver.allocate does: Summary.settle on its object
 *   (complete: the generation set; otherwise the pending rule exactly, at
 *   most TMAX_PENDING pending generations, the least dropped), then
 *   Summaries.settle (kept unless the kept one is of a later generation)
 *   as a second step.
 *
 *   The pool is a geometry of its own, one where a summary that misses
 *   another engine's row can be trusted into an overlap without the
 *   unique key stopping it: P's candidates are 10.0.0.0/24 (0),
 *   10.0.1.0/24 (1) and 10.0.3.0/24 (2), Q's is 10.0.2.0/23 (3): only 2
 *   and 3 overlap, and no two candidates share a first address. (With
 *   cidr.pml's pool every overlap pair includes the /23, and a process of
 *   one pool cannot insert between a row and the summary that misses it.)
 *   Q may release its row once allocated (releasing.release, no lock);
 *   one reconcile free_released may happen at any time, and every full
 *   read may free a released row, as in summary.pml.
 *
 * What is abstracted away
 *
 *   What summary.pml abstracts away, and: Q's other candidates and
 *   summary (one network: it always reads the scope in full), P's
 *   10.0.2.0/24 (its draws are restricted to three candidates), P's
 *   releases and release_scope (summary.pml has them; with them this
 *   run exceeds 46 million states); Summaries.get, Summary.draw,
 *   the second Summaries.get with is_current, and each of the two settles
 *   are one step each.
 *
 * Property: P5 as in summary.pml (no two rows of the scope overlap).
 *
 * The pool, read by murano_cidr/tests/unit/test_model.py:
 * @tpool 10.0.0.0/22
 * @tcidr 0 10.0.0.0/24
 * @tcidr 1 10.0.1.0/24
 * @tcidr 2 10.0.3.0/24
 * @tcidr 3 10.0.2.0/23
 *
 * Mutant: -DSETTLE_OVER_GAP: Summary.settle of a generation not read in
 * full advances the generation to it without waiting for the ones
 * between (generation = max(generation, g)).
 */

#define TNC 4
#define TUNKNOWN 255
#define QC 3            /* Q's candidate */
#define TLAST 2         /* P's candidates: 0 .. TLAST */
/* The /24 blocks each candidate covers (read by test_model.py). */
#define TSPAN0 1
#define TSPAN1 2
#define TSPAN2 8
#define TSPAN3 12
#define TSPAN(c) ((c) == 0 -> TSPAN0 : ((c) == 1 -> TSPAN1 : \
                  ((c) == 2 -> TSPAN2 : TSPAN3)))
#define TBIT(c) (1 << (c))
#define THREAD_ROUNDS(t) ((t) == 0 -> 2 : 1)

#ifndef TMAX_FAULTS
#define TMAX_FAULTS 1
#endif
/* search.MAX_PENDING (16 in the code): the model never needs more. */
#define TMAX_PENDING 2

/* -- the scope row and the table ---------------------------------------- */
byte trow[TNC];         /* 0 none, owner + 1 (threads 1, 2; Q 3), NONE held */
bool tscoperow;
byte tgen;
byte tncreate;
byte tlock;             /* the scope row's lock holder + 1 */
#define TSTART (1 + 40 * tncreate)

/* -- P's summary objects (search.Summary) and its Summaries ------------ */
byte oblk[3];           /* the candidates each blocks, TBIT(c) */
byte ogen[3];           /* its generation; TUNKNOWN: None */
byte op1[3];            /* its pending generations (0: none) */
byte op2[3];
byte stored = NONE;     /* the object Summaries keeps, or NONE */
byte tref[2] = NONE;    /* the object each thread works with, or NONE */

byte tfault;
bool overlap;           /* P5 broken */

#define GEN0(x) ((x) == TUNKNOWN -> 0 : (x))

#define THIT(x, c) (trow[x] != 0 && OVERLAP(TSPAN(x), TSPAN(c)))
#define TROWS_OVERLAP(c) (THIT(0, c) || THIT(1, c) || THIT(2, c) || THIT(3, c))
#define TINWIN(c, lo) ((c) >= (lo) && (c) <= TLAST)
#define TWINMASK(lo) ((TINWIN(0, lo) -> 1 : 0) | (TINWIN(1, lo) -> 2 : 0) \
                      | (TINWIN(2, lo) -> 4 : 0))
#define TROWBIT(c, lo) ((TINWIN(c, lo) && TROWS_OVERLAP(c)) -> TBIT(c) : 0)
#define TROWMASK(lo) (TROWBIT(0, lo) | TROWBIT(1, lo) | TROWBIT(2, lo))

#define TALONE(x, c) ((x) == (c) || trow[x] == 0 \
                      || !OVERLAP(TSPAN(x), TSPAN(c)))
#define TCHECK_INSERT(c) \
    overlap = !(TALONE(0, c) && TALONE(1, c) && TALONE(2, c) \
                && TALONE(3, c)); \
    assert(!overlap)
#define TPAIR(x, y) (trow[x] == 0 || trow[y] == 0 \
                     || !OVERLAP(TSPAN(x), TSPAN(y)))
#define TCHECK_ROWS() \
    overlap = !(TPAIR(0, 1) && TPAIR(0, 2) && TPAIR(0, 3) && TPAIR(1, 2) \
                && TPAIR(1, 3) && TPAIR(2, 3)); \
    assert(!overlap)

#define TOWNER_HELD(o) (held && last != NONE && trow[last] == (o))

#define TMAYFAIL \
    if \
    :: tfault < TMAX_FAULTS -> tfault++; goto rollback \
    :: true -> skip \
    fi

#define TFREE_OR_KEEP(x) \
    if \
    :: trow[x] == NONE -> \
        if \
        :: trow[x] = 0; freed = freed | TBIT(x) \
        :: skip \
        fi \
    :: else -> skip \
    fi

#define TUNFREE(x) \
    if \
    :: freed & TBIT(x) -> trow[x] = NONE \
    :: else -> skip \
    fi

/* Summary.pick / Summary.draw: any candidate of P the summary leaves
 * free. */
#define TPICK(blk) \
    if \
    :: ((blk) & 1) == 0 -> idx = 0 \
    :: ((blk) & 2) == 0 -> idx = 1 \
    :: ((blk) & 4) == 0 -> idx = 2 \
    :: else -> idx = NONE \
    fi

/* An object nobody holds is garbage: cleared, so that states do not
 * differ by it. */
#define TCLEAR(s) \
    if \
    :: (s) != stored && (s) != tref[0] && (s) != tref[1] -> \
        oblk[s] = 0; ogen[s] = 0; op1[s] = 0; op2[s] = 0 \
    :: else -> skip \
    fi
#define TGC TCLEAR(0); TCLEAR(1); TCLEAR(2)

/* Summary.settle(g, complete), the pending rule as the code has it. */
#ifdef SETTLE_OVER_GAP
/* Mutant: a later generation is taken at once, gap or not. */
#define TADD_PENDING(o, g) \
    if \
    :: ogen[o] != TUNKNOWN && (g) > ogen[o] -> ogen[o] = (g) \
    :: else -> skip \
    fi
#else
#define TADD_PENDING(o, g) \
    if \
    :: ogen[o] != TUNKNOWN && (g) > ogen[o] && (g) != op1[o] \
       && (g) != op2[o] -> \
        if \
        :: op1[o] == 0 -> op1[o] = (g) \
        :: op1[o] != 0 && op2[o] == 0 -> op2[o] = (g) \
        :: else -> \
            /* more than TMAX_PENDING: the least goes */ \
            if \
            :: op1[o] <= op2[o] && op1[o] < (g) -> op1[o] = (g) \
            :: op2[o] < op1[o] && op2[o] < (g) -> op2[o] = (g) \
            :: else -> skip \
            fi \
        fi \
    :: else -> skip \
    fi
#endif

#define TSETTLE_OBJ(o, g, full) \
    if \
    :: full -> \
        if \
        :: ogen[o] == TUNKNOWN || (g) > ogen[o] -> ogen[o] = (g) \
        :: else -> skip \
        fi \
    :: else -> TADD_PENDING(o, g) \
    fi; \
    do \
    :: ogen[o] != TUNKNOWN && op1[o] != 0 && op1[o] == ogen[o] + 1 -> \
        ogen[o]++ \
    :: ogen[o] != TUNKNOWN && op2[o] != 0 && op2[o] == ogen[o] + 1 -> \
        ogen[o]++ \
    :: else -> break \
    od; \
    if \
    :: op1[o] != 0 && ogen[o] != TUNKNOWN && op1[o] <= ogen[o] -> op1[o] = 0 \
    :: else -> skip \
    fi; \
    if \
    :: op2[o] != 0 && ogen[o] != TUNKNOWN && op2[o] <= ogen[o] -> op2[o] = 0 \
    :: else -> skip \
    fi; \
    if \
    :: op1[o] == 0 && op2[o] != 0 -> op1[o] = op2[o]; op2[o] = 0 \
    :: op1[o] != 0 && op2[o] != 0 && op2[o] < op1[o] -> \
        u = op1[o]; op1[o] = op2[o]; op2[o] = u \
    :: else -> skip \
    fi

/* One thread of P: DbDriver.allocate in the scope. */
proctype Thread(byte t) {
    byte round, idx, dg, mygen, freed, ins, last, s;
    bool complete, current, held;
    ins = NONE;
    last = NONE;
    idx = NONE;
    do
    :: round < THREAD_ROUNDS(t) ->
        round++;
attempt:
        /* placing.lock_and_insert (a static taken): Summaries.get, then
         * Summary.draw; or a callable taken: straight to lock_scope */
        if
        :: tref[t] = stored;
            atomic {
                if
                :: tref[t] != NONE && ogen[tref[t]] != TUNKNOWN ->
                    TPICK(oblk[tref[t]]); dg = ogen[tref[t]]
                :: else -> idx = NONE
                fi
            }
        :: idx = NONE
        fi;
        /* queries.lock_scope, or queries.lock_and_insert: lock, then
         * insert_unless_taken if the generation is the one expected (no
         * two candidates share a unique key), and Summary.block */
        atomic {
            tlock == 0 -> tlock = t + 1;
            if
            :: tscoperow -> mygen = tgen + 1
            :: else -> mygen = TSTART; tncreate++
            fi;
            if
            :: (idx != NONE && tscoperow && mygen == dg + 1
                && !TOWNER_HELD(t + 1) && trow[idx] == 0) ->
                trow[idx] = t + 1;
                ins = idx;
                TCHECK_INSERT(idx);
                oblk[tref[t]] = oblk[tref[t]] | TBIT(idx);
                complete = false
            :: else -> skip
            fi
        };
        TMAYFAIL;
        if
        :: ins != NONE -> goto commit
        :: else -> skip
        fi;
        /* placing.insert_in_scope: Summaries.get again, is_current */
        atomic {
            tref[t] = stored;
            TGC;
            if
            :: tref[t] == NONE -> complete = true
            :: else ->
                complete = false;
                current = (ogen[tref[t]] == mygen - 1)
            fi
        };
        if
        :: complete -> goto fullread
        :: else -> skip
        fi;
search:
        atomic { TPICK(oblk[tref[t]]) };
        if
        :: idx == NONE && complete -> goto exhausted
        :: idx == NONE && !complete -> goto fullread
        :: else -> skip
        fi;
        /* placing._insert: insert_unless_taken for a current summary,
         * insert_if_free otherwise; then Summary.block */
        atomic {
            if
            :: (!TOWNER_HELD(t + 1) && ((current && trow[idx] == 0)
                || (!current && !TROWS_OVERLAP(idx)))) ->
                trow[idx] = t + 1;
                ins = idx;
                TCHECK_INSERT(idx);
                oblk[tref[t]] = oblk[tref[t]] | TBIT(idx)
            :: else -> skip
            fi
        };
        if
        :: ins != NONE -> TMAYFAIL; goto commit
        :: TOWNER_HELD(t + 1) -> goto commit   /* read_window: held */
        :: else -> skip
        fi;
        /* a miss: queries.read_window, Summary.learn, Summary.block */
        d_step {
            oblk[tref[t]] = ((oblk[tref[t]] & ~TWINMASK(idx))
                             | TROWMASK(idx) | TBIT(idx))
        };
        TMAYFAIL;
        goto search;
fullread:
        /* placing.read_summary: a new Summary (an object nobody holds),
         * the freeable rows freed */
        atomic {
            TFREE_OR_KEEP(0);
            TFREE_OR_KEEP(1);
            TFREE_OR_KEEP(2);
            TFREE_OR_KEEP(3);
            if
            :: stored != 0 && tref[1 - t] != 0 -> s = 0
            :: else ->
                if
                :: stored != 1 && tref[1 - t] != 1 -> s = 1
                :: else -> s = 2
                fi
            fi;
            tref[t] = s;
            TGC;
            oblk[s] = TROWMASK(0);
            ogen[s] = TUNKNOWN;
            op1[s] = 0;
            op2[s] = 0;
            s = 0;
            complete = true;
            current = true
        };
        TMAYFAIL;
        goto search;
exhausted:
        if
        :: TOWNER_HELD(t + 1) -> goto commit
        :: else -> skip
        fi;
        /* PoolExhausted: the transaction rolls back, nobody retries */
        d_step {
            TUNFREE(0); TUNFREE(1); TUNFREE(2); TUNFREE(3);
            tlock = 0;
            tref[t] = NONE;
            TGC
        };
        goto next;
commit:
        /* the transaction commits (P5 over the table) */
        atomic {
            tgen = mygen;
            tscoperow = true;
            tlock = 0;
            TCHECK_ROWS();
            if
            :: ins != NONE -> last = ins; held = false
            :: else -> skip
            fi
        };
        if
        :: tfault < TMAX_FAULTS ->
            /* committed, the answer lost: no settle; the retry finds the
             * owner's row */
            d_step {
                tfault++;
                held = true;
                ins = NONE; freed = 0; idx = NONE; dg = 0; mygen = 0;
                complete = false; current = false;
                tref[t] = NONE;
                TGC
            };
            goto attempt
        :: true -> skip
        fi;
        /* DbDriver.allocate, once committed: Summaries.settle calls
         * Summary.settle ... */
        d_step { TSETTLE_OBJ(tref[t], mygen, complete); u = 0 };
        /* ... then keeps the more current object */
        d_step {
            if
            :: (stored != NONE && stored != tref[t]
                && GEN0(ogen[stored]) > GEN0(ogen[tref[t]])) -> skip
            :: else -> stored = tref[t]
            fi;
            tref[t] = NONE;
            TGC
        };
        goto next;
rollback:
        atomic {
            if
            :: ins != NONE -> trow[ins] = 0
            :: else -> skip
            fi;
            TUNFREE(0); TUNFREE(1); TUNFREE(2); TUNFREE(3);
            tlock = 0;
            ins = NONE; freed = 0; idx = NONE; dg = 0; mygen = 0;
            complete = false; current = false;
            tref[t] = NONE;
            TGC
        };
        goto attempt;
next:
        atomic {
            ins = NONE; freed = 0; idx = NONE; dg = 0; mygen = 0;
            complete = false; current = false; held = false; last = NONE
        }
    :: round >= THREAD_ROUNDS(t) -> break
    od
}

/* Q: another engine, one network, no summary: it reads the scope in full
 * (read_summary, freeing any released rows) and inserts its candidate
 * if no row overlaps it. */
proctype Other() {
    byte mygen, freed, ins, last;
    bool held;
    ins = NONE;
    last = NONE;
attempt:
    atomic {
        tlock == 0 -> tlock = 3;
        if
        :: tscoperow -> mygen = tgen + 1
        :: else -> mygen = TSTART; tncreate++
        fi
    };
    TMAYFAIL;
    atomic {
        TFREE_OR_KEEP(0);
        TFREE_OR_KEEP(1);
        TFREE_OR_KEEP(2);
        TFREE_OR_KEEP(3);
        if
        :: !TOWNER_HELD(3) && !TROWS_OVERLAP(QC) ->
            trow[QC] = 3;
            ins = QC;
            TCHECK_INSERT(QC)
        :: else -> skip
        fi
    };
    if
    :: ins == NONE && !TOWNER_HELD(3) ->
        /* PoolExhausted */
        d_step { TUNFREE(0); TUNFREE(1); TUNFREE(2); TUNFREE(3); tlock = 0 };
        goto done
    :: else -> skip
    fi;
    TMAYFAIL;
    atomic {
        tgen = mygen;
        tscoperow = true;
        tlock = 0;
        TCHECK_ROWS();
        if
        :: ins != NONE -> last = ins; held = false
        :: else -> skip
        fi
    };
    if
    :: tfault < TMAX_FAULTS ->
        d_step { tfault++; held = true; ins = NONE; freed = 0; mygen = 0 };
        goto attempt
    :: true -> skip
    fi;
    if
    :: atomic { last != NONE && trow[last] == 3 -> trow[last] = NONE }
    :: skip
    fi;
    goto done;
rollback:
    atomic {
        if
        :: ins != NONE -> trow[ins] = 0
        :: else -> skip
        fi;
        TUNFREE(0); TUNFREE(1); TUNFREE(2); TUNFREE(3);
        tlock = 0;
        ins = NONE; freed = 0; mygen = 0
    };
    goto attempt;
done:
    skip
}

/* murano-cidr reconcile: DbDriver.free_released, once, at any time. */
active proctype TReconcile() {
end:
    atomic {
        if
        :: trow[0] == NONE -> trow[0] = 0
        :: trow[1] == NONE -> trow[1] = 0
        :: trow[2] == NONE -> trow[2] = 0
        :: trow[3] == NONE -> trow[3] = 0
        fi
    }
}
