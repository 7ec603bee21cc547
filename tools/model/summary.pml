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
 * The db driver's current summary (issue 18), for spin: included by
 * cidr.pml with -DSUMMARY; see doc/source/contributor/model.rst.
 *
 * What is modelled
 *
 *   Three engines (processes) allocate in one scope, from cidr.pml's pool:
 *   engine 0 the /23 (candidate 0), engines 1 and 2 the /24s (candidates
 *   1 and 2), SROUNDS(e) networks each. Each process keeps its summary of
 *   the scope (search.Summaries): the candidates it blocks and its
 *   generation, or none (UNKNOWN). The scope row (models.Scope) has a
 *   committed generation and a row lock (dblock); it is created by the
 *   first lock. Every allocation is one transaction (DbDriver._allocate),
 *   which may roll back after any step, up to MAX_FAULTS times a run (a
 *   lost connection, a deadlock: oslo_db's retry runs it again for the
 *   same owner), or whose commit may reach the database while its answer
 *   is lost (then the retry finds the owner's row). A rollback undoes the
 *   generation bump, the insert and the released rows freed; what the
 *   transaction changed in the process's summary (block, learn) stays.
 *
 *   An attempt either draws a candidate from the summary before the lock
 *   (a static taken, placing.lock_and_insert on every database: one
 *   statement on PostgreSQL, lock_scope then insert_unless_taken
 *   elsewhere) and inserts it, checking only the unique keys, if the lock
 *   returns the drawn generation + 1; or locks first (a callable taken)
 *   and runs placing.insert_in_scope: a process without a summary reads
 *   the scope in full (read_summary, which frees any of the released
 *   rows: past the grace period and off the router, abstracted); a
 *   summary current at the lock's generation - 1 inserts with
 *   insert_unless_taken, any other with the checked insert_if_free; a
 *   miss reads the window from the candidate (read_window) into the
 *   summary (learn, block); no candidate left reads the scope in full.
 *   Once committed, the summary is settled (Summaries.settle, see SETTLE)
 *   at the lock's generation if it was current or read in full.
 *
 *   An engine may release its network's row once allocated
 *   (releasing.release: no lock). Besides the engines, one
 *   release_scope (queries.delete_scope: lock, delete the rows, keep and
 *   bump the scope row) and one reconcile free_released (releasing.free:
 *   a released row deleted without the scope's lock) may each happen at
 *   any time.
 *
 * What is abstracted away
 *
 *   taken (the router; every engine sees an empty one: it only removes
 *   candidates), the grace period (a full read frees any subset of the
 *   released rows), SQL isolation (the scope row's lock is a mutex; what
 *   the holder has not committed is seen only by the holder), threads
 *   (one allocation at a time per process), MAX_MISSES (two candidates
 *   per engine at most), other scopes and IP versions.
 *
 * Property (assertions)
 *
 *   P5: no two rows of the scope overlap, live or released: checked at
 *       every insert (the inserting transaction's view) and every commit.
 *   P4: no invalid end state.
 *
 * Mutants (each must fail P5): -DSETTLE_EARLY (settle before the
 * commit), -DNO_GEN_CHECK (a summary trusted whatever the lock returns),
 * -DOLD_RELEASE_SCOPE (release_scope deletes the scope row, a new row
 * starts at generation 1, as before issue 18), -DSNAPSHOT (the one
 * PostgreSQL statement compares the generation of its snapshot, read
 * before it waits for the lock, instead of the one its UPDATE returns).
 * -DNO_SCOPE_BUMP is a variant that passes: release_scope deleting rows
 * without a bump (a deletion leaves every summary blocking more).
 */

#define UNKNOWN 255

/* The unique key (scope, ip_version, range_first): the /23 and the first
 * /24 start at the same address, the second /24 does not. */
#define KEY(c) ((c) == 2 -> 1 : 0)
#define BIT(c) (1 << (c))

#ifndef MAX_FAULTS
#define MAX_FAULTS 1
#endif

/* Networks per engine: engine 1 allocates twice, so that a summary of an
 * earlier transaction is used by a later one. */
#ifndef SROUNDS
#define SROUNDS(e) ((e) == 1 -> 2 : 1)
#endif

/* -- the scope row (drivers/db/models.py Scope) ----------------------- */
bool scoperow;          /* it exists (committed) */
byte gen;               /* its committed generation */
byte ncreate;           /* rows created so far, committed or not */

/* queries.create_scope: a new row's first generation, drawn at random in
 * the code: here one that no earlier row (committed or rolled back) had.
 * The mutant: 1, as before issue 18. */
#ifdef OLD_RELEASE_SCOPE
#define START 1
#else
#define START (1 + 40 * ncreate)
#endif

/* -- each process's summary (drivers/db/search.py Summaries) ----------- */
byte sblk[NE];          /* the candidates it blocks, BIT(c) */
byte sgen[NE];          /* its generation; UNKNOWN: Summaries.get is None */

byte nfault;            /* rollbacks and lost commit answers so far */
bool overlap;           /* P5 broken (false in every state of a pass) */

/* A row (live or released) of the scope overlaps candidate c; one has c's
 * unique key. */
#define HIT(x, c) (row[x] != 0 && OVERLAP(SPAN(x), SPAN(c)))
#define ROWS_OVERLAP(c) (HIT(0, c) || HIT(1, c) || HIT(2, c))
#define KEYHIT(x, c) (row[x] != 0 && KEY(x) == KEY(c))
#define KEY_TAKEN(c) (KEYHIT(0, c) || KEYHIT(1, c) || KEYHIT(2, c))

/* The candidates of [lo, LAST(e)] that a row blocks (search.window's
 * window, the whole rest of the engine's pool here). */
#define INWIN(c, lo, e) ((c) >= (lo) && (c) <= LAST(e))
#define WINBIT(c, lo, e) (INWIN(c, lo, e) -> BIT(c) : 0)
#define WINMASK(lo, e) (WINBIT(0, lo, e) | WINBIT(1, lo, e) | WINBIT(2, lo, e))
#define ROWBIT(c, lo, e) ((INWIN(c, lo, e) && ROWS_OVERLAP(c)) -> BIT(c) : 0)
#define ROWMASK(lo, e) (ROWBIT(0, lo, e) | ROWBIT(1, lo, e) | ROWBIT(2, lo, e))

/* P5 as the row of c goes in: nothing else there overlaps it. */
#define ALONE(x, c) ((x) == (c) || row[x] == 0 || !OVERLAP(SPAN(x), SPAN(c)))
#define CHECK_INSERT(c) \
    overlap = !(ALONE(0, c) && ALONE(1, c) && ALONE(2, c)); \
    assert(!overlap)
/* P5 at a commit: no two rows overlap. */
#define PAIR(x, y) (row[x] == 0 || row[y] == 0 || !OVERLAP(SPAN(x), SPAN(y)))
#define CHECK_ROWS() \
    overlap = !(PAIR(0, 1) && PAIR(0, 2) && PAIR(1, 2)); \
    assert(!overlap)

/* The summary the transaction works with: its own, read in full in it
 * (fresh, kept only at settle), or the process's. */
#define VIEW (fresh -> lblk : sblk[e])

/* A unique key also refuses the owner's second row: after a lost commit
 * answer the owner holds `last`. */
#define OWNER_HELD (held && row[last] == e + 1)

/* lock_and_insert inserts when the lock returns the drawn generation + 1;
 * insert_in_scope trusts a summary current at the lock's generation - 1. */
#if defined(NO_GEN_CHECK)
#define TRUSTED true
#define CURRENT true
#elif defined(SNAPSHOT)
#define TRUSTED (snap + 1 == dg + 1)
#define CURRENT (sgen[e] == mygen - 1)
#else
#define TRUSTED (mygen == dg + 1)
#define CURRENT (sgen[e] == mygen - 1)
#endif

/* The transaction may fail here: its rollback, then oslo_db's retry. */
#define MAYFAIL \
    if \
    :: nfault < MAX_FAULTS -> nfault++; goto rollback \
    :: true -> skip \
    fi

/* placing.read_summary frees a released row (releasing.free_rows), or
 * not (its grace period, the engine's taken). */
#define FREE_OR_KEEP(x) \
    if \
    :: row[x] == NONE -> \
        if \
        :: row[x] = 0; freed = freed | BIT(x) \
        :: skip \
        fi \
    :: else -> skip \
    fi

/* Summary.pick / Summary.draw: any candidate the summary leaves free. */
#define PICK(blk) \
    if \
    :: !OVERLAP(blk, BIT(FIRST(e))) -> idx = FIRST(e) \
    :: !OVERLAP(blk, BIT(LAST(e))) -> idx = LAST(e) \
    :: else -> idx = NONE \
    fi

/* Summaries.settle, once committed (as of dc2438e): a summary read in
 * full is current at the lock's generation and replaces the kept one
 * unless that is of a later generation; the summary the transaction used
 * becomes current at it if it was current at the one before. The code
 * also settles that summary when it was not: the generation waits
 * (Summary._pending) for the ones between, which only another thread of
 * the process can fill; with one allocation at a time per process none
 * does, so nothing happens then, as here. */
#define SETTLE \
    atomic { \
        if \
        :: current && fresh && (sgen[e] == UNKNOWN || sgen[e] <= mygen) -> \
            sblk[e] = lblk; sgen[e] = mygen \
        :: current && !fresh && (sgen[e] == UNKNOWN || mygen > sgen[e]) -> \
            sgen[e] = mygen \
        :: else -> skip \
        fi \
    }

/* One engine: DbDriver.allocate in the scope, then maybe release. */
proctype SumEngine(byte e) {
    byte round, idx, dg, snap, mygen, lblk, freed, ins, last;
    bool fresh, complete, current, held;
    ins = NONE;
    last = NONE;
    idx = NONE;
    do
    :: round < SROUNDS(e) ->
        round++;
attempt:
        /* placing.lock_and_insert: Summary.draw before the lock (a static
         * taken), or none (a callable taken: queries.lock_scope first) */
        atomic {
            if
            :: sgen[e] != UNKNOWN -> PICK(sblk[e]); dg = sgen[e]
            :: true -> idx = NONE
            fi
        };
#ifdef SNAPSHOT
        /* Mutant: the one statement's snapshot, before it waits */
        if
        :: idx != NONE -> snap = gen
        :: else -> skip
        fi;
#endif
        /* queries.lock_scope (create_scope for a scope without a row), or
         * queries.lock_and_insert: lock, then insert_unless_taken if the
         * generation is the one expected (and Summary.block) */
        atomic {
            dblock == 0 -> dblock = e + 1;
            if
            :: scoperow -> mygen = gen + 1
            :: else -> mygen = START; ncreate++
            fi;
            if
            :: (idx != NONE && scoperow && TRUSTED && !OWNER_HELD
                && !KEY_TAKEN(idx)) ->
                row[idx] = e + 1;
                ins = idx;
                CHECK_INSERT(idx);
                sblk[e] = sblk[e] | BIT(idx);
                current = true
            :: else -> skip
            fi
        };
        MAYFAIL;
        if
        :: ins != NONE -> goto commit
        :: else -> skip
        fi;
        /* placing.insert_in_scope */
        d_step {
            if
            :: sgen[e] == UNKNOWN -> complete = true
            :: else -> complete = false; fresh = false; current = CURRENT
            fi
        };
        if
        :: complete -> goto fullread
        :: else -> skip
        fi;
search:
        atomic { PICK(VIEW) };
        if
        :: idx == NONE && complete -> goto exhausted
        :: idx == NONE && !complete -> goto fullread
        :: else -> skip
        fi;
        /* placing._insert: insert_unless_taken for a current summary,
         * insert_if_free otherwise; then Summary.block */
        atomic {
            if
            :: (!OWNER_HELD && ((current && !KEY_TAKEN(idx))
                                || (!current && !ROWS_OVERLAP(idx)))) ->
                row[idx] = e + 1;
                ins = idx;
                CHECK_INSERT(idx);
                if
                :: fresh -> lblk = lblk | BIT(idx)
                :: else -> sblk[e] = sblk[e] | BIT(idx)
                fi
            :: else -> skip
            fi
        };
        if
        :: ins != NONE -> MAYFAIL; goto commit
        :: OWNER_HELD -> goto commit   /* read_window: held; _placed */
        :: else -> skip
        fi;
        /* a miss: queries.read_window, Summary.learn, Summary.block */
        d_step {
            if
            :: fresh ->
                lblk = (lblk & ~WINMASK(idx, e)) | ROWMASK(idx, e) | BIT(idx)
            :: else ->
                sblk[e] = ((sblk[e] & ~WINMASK(idx, e)) | ROWMASK(idx, e)
                           | BIT(idx))
            fi
        };
        MAYFAIL;
        goto search;
fullread:
        /* placing.read_summary: a new Summary, the freeable rows freed */
        atomic {
            FREE_OR_KEEP(0);
            FREE_OR_KEEP(1);
            FREE_OR_KEEP(2);
            lblk = ROWMASK(FIRST(e), e);
            fresh = true;
            complete = true;
            current = true
        };
        MAYFAIL;
        goto search;
exhausted:
        if
        :: OWNER_HELD -> goto commit   /* _placed: the owner's CIDR */
        :: else -> skip
        fi;
        /* PoolExhausted: the transaction rolls back, nobody retries */
        d_step {
            if
            :: freed & 1 -> row[0] = NONE
            :: else -> skip
            fi;
            if
            :: freed & 2 -> row[1] = NONE
            :: else -> skip
            fi;
            if
            :: freed & 4 -> row[2] = NONE
            :: else -> skip
            fi;
            dblock = 0
        };
        goto next;
commit:
#ifdef SETTLE_EARLY
        /* Mutant: settled before the commit, which may still fail */
        SETTLE;
        MAYFAIL;
#endif
        /* the transaction commits (P5 over the table) */
        atomic {
            gen = mygen;
            scoperow = true;
            dblock = 0;
            CHECK_ROWS();
            if
            :: ins != NONE -> last = ins; held = false
            :: else -> skip
            fi
        };
        if
        :: nfault < MAX_FAULTS ->
            /* committed, but the answer is lost: no settle; the retry
             * finds the owner's row */
            d_step {
                nfault++;
                held = true;
                ins = NONE; freed = 0; idx = NONE; dg = 0; snap = 0;
                mygen = 0; lblk = 0; fresh = false; complete = false;
                current = false
            };
            goto attempt
        :: true -> skip
        fi;
#ifndef SETTLE_EARLY
        SETTLE;
#endif
        /* later, maybe: DbDriver.release (releasing.release, no lock) */
        if
        :: atomic { last != NONE && row[last] == e + 1 -> row[last] = NONE }
        :: skip
        fi;
        goto next;
rollback:
        atomic {
            if
            :: ins != NONE -> row[ins] = 0
            :: else -> skip
            fi;
            if
            :: freed & 1 -> row[0] = NONE
            :: else -> skip
            fi;
            if
            :: freed & 2 -> row[1] = NONE
            :: else -> skip
            fi;
            if
            :: freed & 4 -> row[2] = NONE
            :: else -> skip
            fi;
            dblock = 0;
            ins = NONE; freed = 0; idx = NONE; dg = 0; snap = 0;
            mygen = 0; lblk = 0; fresh = false; complete = false;
            current = false
        };
        goto attempt;
next:
        /* the next network: another owner */
        atomic {
            ins = NONE; freed = 0; idx = NONE; dg = 0; snap = 0;
            mygen = 0; lblk = 0; fresh = false; complete = false;
            current = false; held = false; last = NONE
        }
    :: round >= SROUNDS(e) -> break
    od
}

/* DbDriver.release_scope (queries.delete_scope), once, at any time, by a
 * process without a summary of its own (its forget changes nothing). */
active proctype ReleaseScope() {
end:
    atomic {
        dblock == 0 ->
        row[0] = 0;
        row[1] = 0;
        row[2] = 0;
#ifdef OLD_RELEASE_SCOPE
        /* Mutant: the scope row goes too; the next lock creates it at 1 */
        scoperow = false
#elif defined(NO_SCOPE_BUMP)
        /* A variant, not a mutant: rows deleted, nothing bumped (passes) */
        skip
#else
        if
        :: scoperow -> gen++   /* lock_scope(create=False), committed */
        :: else -> skip
        fi
#endif
    }
}

/* murano-cidr reconcile: DbDriver.free_released (releasing.free), once, at
 * any time: a released row deleted without the scope's lock, nothing
 * bumped. */
active proctype Reconcile() {
end:
    atomic {
        if
        :: row[0] == NONE -> row[0] = 0
        :: row[1] == NONE -> row[1] = 0
        :: row[2] == NONE -> row[2] = 0
        fi
    }
}
