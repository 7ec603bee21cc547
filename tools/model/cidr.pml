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
 * The lock driver's reservation protocol and the db driver's release path,
 * for spin (see doc/source/contributor/model.rst and tools/model/check.sh).
 *
 * What is modelled
 *
 *   Three engines deploy, one network at a time, ROUNDS networks each, on
 *   one router (one scope). Engine 0 asks for /23 subnets, engines 1 and 2
 *   for /24s, from the pool 10.0.0.0/23 with reservation_prefixlen 24: the
 *   /23 overlaps both /24s and shares a block lock with each. A deployment
 *   is allocate, plug the subnet into the router (which refuses an
 *   overlapping interface, as Neutron does), confirm; later the network may
 *   be released, and its subnet removed at once or left on the router for
 *   good (a network removed from a live environment).
 *
 *   -DDB off (the lock driver, murano_cidr/engine/drivers/lock/): the lock
 *   service holds one lock per /24 block; any held lock (and the scope
 *   lock) may expire at any step, at most MAX_EXPIRE times in a run.
 *   Reservation locks are taken without waiting, in address order; the
 *   scope lock is taken (waiting) only with -DSCOPE_LOCK (ZooKeeper, file
 *   locks). taken is read before the pick and again once the locks are
 *   held; confirm comes after the subnet is on the router and raises
 *   ReservationLost when a lock was lost, and the caller then deletes its
 *   subnet (the contract's duty). Every engine sees every subnet.
 *
 *   -DDB on (the db driver, murano_cidr/engine/drivers/db/allocating.py): an
 *   allocation is one transaction under the scope's row lock: taken is
 *   read, then released rows that may be freed (past the grace period by
 *   the server's clock at that statement, their CIDR absent from the
 *   read) are deleted and a candidate no row and no taken CIDR overlaps is
 *   inserted. A release takes the same row lock and keeps the row
 *   (released); a clock marks a released row past its grace period at
 *   any step. Engine 2 is in another project
 *   on a shared router: it and engines 0 and 1 do not see each other's
 *   subnets in taken (the router, like Neutron, checks them all).
 *
 * What is abstracted away
 *
 *   Time (only "the lock expired" and "the grace period passed", as events
 *   that may happen at any step); the random order of candidates (every
 *   order is explored: a pick is a nondeterministic choice); the db
 *   driver's search summary, cache and windows (the model reads the whole
 *   scope and frees every freeable row at every allocation, the earliest
 *   the code may free one); several scopes (scopes never interact); SQL
 *   isolation (the row lock serialises the transaction, modelled as
 *   atomic steps under a mutex); the lock service's network (a call either
 *   happens or the lock expired); Heat (a subnet is plugged by one step
 *   and removed by one step); process crashes (a crashed holder's locks
 *   expire: the same event); owners (one network per engine at a time);
 *   exhaustion and LockUnavailable are outcomes that end a deployment.
 *
 * Properties (assertions; spin -a, pan -E is not used: end states count)
 *
 *   P1 (allocate): a CIDR allocate returns overlaps no live reservation of
 *      another engine and no subnet on the router, unless a reservation
 *      was lost: the returning engine's (its confirm raises
 *      ReservationLost) or that of the engine owning the reservation or
 *      the unconfirmed subnet (whose confirm raises).
 *   P2 (router): when the router refuses an engine's subnet, the engine's
 *      reservation was lost, or every subnet it collides with belongs to
 *      an engine whose reservation was lost (told ReservationLost).
 *      With -DNO_EXPIRY: no reservation is lost and nothing is refused.
 *   P3 (release, -DDB): a CIDR allocate returns overlaps no subnet on the
 *      router unless that subnet's network was released, its grace period
 *      had passed, and the allocating engine cannot see it.
 *   P4: no invalid end state (no deadlock): spin's own check.
 *
 * Mutants (each must fail): -DNO_SECOND_READ (taken is read once, before
 * the locks), -DPER_CIDR_LOCKS (a lock per exact CIDR instead of per
 * block), -DDB -DRELEASE_AT_ONCE (release deletes the row), -DDB
 * -DRELEASE_UNLOCKED (release does not take the scope's row lock).
 *
 * The pool and block rule, read by
 * murano_cidr/tests/unit/test_model.py and compared with the code:
 * @pool 10.0.0.0/23
 * @reservation_prefixlen 24
 * @block 0 10.0.0.0/24
 * @block 1 10.0.1.0/24
 * @cidr 0 10.0.0.0/23
 * @cidr 1 10.0.0.0/24
 * @cidr 2 10.0.1.0/24
 * @engine 0 23
 * @engine 1 24
 * @engine 2 24
 */

#ifndef ROUNDS
#define ROUNDS 2
#endif
#ifdef NO_EXPIRY
#define MAX_EXPIRE 0
#endif
#ifndef MAX_EXPIRE
#define MAX_EXPIRE 1
#endif

#define NE 3            /* engines */
#define NC 3            /* candidate CIDRs */
#define NONE 255

/* The blocks each candidate covers, as a bit per @block: the block rule
 * (backend.blocks(net, reservation_prefixlen)). A block is a /24, so the
 * same bits are the candidate's addresses. */
#define SPAN0 3
#define SPAN1 1
#define SPAN2 2
#define SPAN(c) ((c) == 0 -> SPAN0 : ((c) == 1 -> SPAN1 : SPAN2))

/* The candidates of an engine's subnet size: [FIRST, LAST]. */
#define FIRST(e) ((e) == 0 -> 0 : 1)
#define LAST(e) ((e) == 0 -> 0 : 2)

#ifdef PER_CIDR_LOCKS
/* Mutant: one lock per candidate CIDR, named by the CIDR itself. */
#define NL 3
#define LOCKS(c) (1 << (c))
#define LOCK_SPAN(l) SPAN(l)
#else
/* One lock per block: the locks of a candidate are its blocks. */
#define NL 2
#define LOCKS(c) SPAN(c)
#define LOCK_SPAN(l) (1 << (l))
#endif

#define OVERLAP(x, y) (((x) & (y)) != 0)

/* -- the router (murano_cidr/measuring/simulate/router.py, ModelRouter) ---- */
byte sub[NC];           /* engine + 1 whose subnet is on the router, or 0 */
bool sconf[NC];         /* ghost: that subnet's allocation was confirmed */
bool released[NC];      /* ghost: that subnet's network was released */
bool sgraced[NC];       /* ghost: ... and its grace period had passed */
byte rmask;             /* addresses of every subnet on the router */

/* -- the lock service (drivers/lock/backend.py, tooz_backend.py) ------- */
byte lk[NL];            /* engine + 1 holding the lock, or 0 */
byte sl;                /* the scope lock's holder + 1, or 0 */
byte nexp;              /* expiries so far */

/* -- ghosts of the properties ----------------------------------------- */
bool lost[NE];          /* a lock of this engine's reservation expired */
byte resv[NE];          /* addresses reserved, from allocate to confirm */

/* -- the db driver's table (drivers/db/models.py Allocation) ---------- */
byte row[NC];           /* 0 none, e + 1 live allocation of e, NONE held */
bool graced[NC];        /* a released row whose grace period passed */
byte dblock;            /* the scope row's lock holder + 1 (lock_scope) */

#define PROJECT(e) ((e) == 2 -> 1 : 0)
#ifdef DB
#define VISIBLE(owner, e) (PROJECT(owner) == PROJECT(e))
#else
#define VISIBLE(owner, e) true
#endif

/* Scratch values of the d_steps (not part of the state). */
hidden byte i, u;

/* What an engine's taken read returns: the router's subnets it can see
 * (ModelRouter.cidrs through the engine's Neutron client). */
inline read_taken(e, seen) {
    seen = 0;
    i = 0;
    do
    :: i < NC ->
        if
        :: sub[i] != 0 && VISIBLE(sub[i] - 1, e) -> seen = seen | SPAN(i)
        :: else -> skip
        fi;
        i++
    :: else -> break
    od
}

/* The subnets on the router whose engine was not told (and will not be
 * told) ReservationLost: confirmed ones, or those of an engine whose
 * reservation is intact. */
inline untainted(res) {
    res = 0;
    i = 0;
    do
    :: i < NC ->
        if
        :: sub[i] != 0 && (sconf[i] || !lost[sub[i] - 1]) ->
            res = res | SPAN(i)
        :: else -> skip
        fi;
        i++
    :: else -> break
    od
}

/* P1: called as allocate returns CIDR c to engine e. */
inline check_allocated(e, c) {
    untainted(u);
    assert(!OVERLAP(SPAN(c), u) || lost[e]);
    i = 0;
    do
    :: i < NE ->
        assert(i == e || !OVERLAP(SPAN(c), resv[i]) || lost[i] || lost[e]);
        i++
    :: else -> break
    od
}

/* ModelRouter.add_interface: plug c, unless it overlaps a subnet there
 * (then P2, or P3 for the db driver). */
inline plug(e, c, refused) {
    d_step {
        untainted(u);
        if
        :: OVERLAP(SPAN(c), rmask) ->
            refused = true;
#ifdef NO_EXPIRY
            assert(false);
#endif
#ifdef DB
            check_released_only(e, c);
#else
            assert(!OVERLAP(SPAN(c), u) || lost[e]);
#endif
        :: else ->
            refused = false;
            sub[c] = e + 1;
            sconf[c] = false;
            released[c] = false;
            sgraced[c] = false;
            rmask = rmask | SPAN(c)
        fi
    }
}

/* ModelRouter.remove_interface (Heat deletes the subnet). */
inline unplug(c) {
    sub[c] = 0;
    sconf[c] = false;
    released[c] = false;
    sgraced[c] = false;
    rmask = rmask & ~SPAN(c)
}

#if !defined(DB)

/* reservation.release(): drop the locks this engine still holds. */
inline drop_locks(e, held) {
    i = 0;
    do
    :: i < NL ->
        if
        :: OVERLAP(held, 1 << i) && lk[i] == e + 1 -> lk[i] = 0
        :: else -> skip
        fi;
        i++
    :: else -> break
    od;
    held = 0
}

/* One lock engine: LockDriver.allocate / confirm / release. */
proctype LockEngine(byte e) {
    byte round, c, seen, tried, held, l;
    bool refused, ok;
    round = 0;
    do
    :: round < ROUNDS ->
        round++;
        /* LockDriver.allocate */
        lost[e] = false;
#ifdef SCOPE_LOCK
        /* backend.scope_lock: waits, where the service queues waiters */
        atomic { sl == 0 -> sl = e + 1 };
#endif
        /* picking.pick: taken_set = read_taken() */
        d_step { read_taken(e, seen); tried = 0; ok = false };
pick:
        /* picking.pick: a random free candidate (any one, here) */
        atomic {
            if
            :: !OVERLAP(SPAN(FIRST(e)), seen | tried) -> c = FIRST(e)
            :: !OVERLAP(SPAN(LAST(e)), seen | tried) -> c = LAST(e)
            :: else -> goto done   /* PoolExhausted */
            fi;
            held = 0;
            l = 0
        };
        /* picking.try_reserve: each lock without waiting, in order */
        do
        :: l < NL && !OVERLAP(LOCKS(c), 1 << l) -> l++
        :: l < NL && OVERLAP(LOCKS(c), 1 << l) ->
            atomic {
                if
                :: lk[l] == 0 -> lk[l] = e + 1; held = held | (1 << l); l++
                :: else ->
                    /* busy: give the candidate up, skip the block */
                    tried = tried | LOCK_SPAN(l);
                    l = NL + 1
                fi
            }
        :: l >= NL -> break
        od;
        if
        :: l == NL + 1 -> d_step { drop_locks(e, held) }; goto pick
        :: else -> skip
        fi;
#ifndef NO_SECOND_READ
        /* picking.pick: read taken again once the locks are held */
        d_step { read_taken(e, seen) };
        if
        :: OVERLAP(SPAN(c), seen) ->
            tried = tried | SPAN(c);
            d_step { drop_locks(e, held) };
            goto pick
        :: else -> skip
        fi;
#endif
        /* picking.pick: reservation.still_held(), then return */
        d_step {
            if
            :: lost[e] ->
                /* LockUnavailable: nothing is kept */
                drop_locks(e, held)
            :: else ->
                ok = true;
                resv[e] = SPAN(c);
                check_allocated(e, c)
            fi
        };
done:
        skip;
#ifdef SCOPE_LOCK
        d_step { if :: sl == e + 1 -> sl = 0 :: else -> skip fi };
#endif
        if
        :: !ok -> skip
        :: else ->
            /* the stack push: ModelRouter.add_interface */
            plug(e, c, refused);
            if
            :: refused ->
                /* reserve() releases on error: LockDriver.release */
                d_step { drop_locks(e, held); resv[e] = 0 }
            :: else ->
                /* LockDriver.confirm: reservation.release_checked() */
                d_step {
                    if
                    :: lost[e] ->
                        /* ReservationLost: the caller deletes its subnet */
                        unplug(c)
                    :: else ->
                        /* nothing is kept: the router is the record */
                        sconf[c] = true
                    fi;
                    resv[e] = 0;
                    drop_locks(e, held)
                };
                if
                :: sub[c] == e + 1 ->
                    /* later, maybe: the delete (in any engine), then Heat */
                    if
                    :: skip
                    :: d_step { unplug(c) }
                    fi
                :: else -> skip
                fi
            fi
        fi;
        /* the next deployment starts afresh */
        d_step { c = 0; seen = 0; tried = 0; held = 0; l = 0; ok = false;
                 refused = false }
    :: round >= ROUNDS -> break
    od
}

/* The lock service: any held lock may expire (tooz's TTL, ZooKeeper's
 * session), at any step. */
active proctype LockService() {
    byte l;
end:
    do
    :: nexp < MAX_EXPIRE ->
        atomic {
            if
            :: l = 0
            :: l = 1
#ifdef PER_CIDR_LOCKS
            :: l = 2
#endif
            fi;
            if
            :: lk[l] != 0 ->
                lost[lk[l] - 1] = true;
                lk[l] = 0;
                nexp++
            :: else -> skip
            fi
        }
#ifdef SCOPE_LOCK
    :: nexp < MAX_EXPIRE && sl != 0 -> atomic { sl = 0; nexp++ }
#endif
    od
}

#else /* DB */

/* P3 (and P2 for the db driver): every subnet on the router that c
 * overlaps was released, past its grace period, and e cannot see it. */
inline check_released_only(e, c) {
    d_step {
        i = 0;
        do
        :: i < NC ->
            assert(!(sub[i] != 0 && OVERLAP(SPAN(c), SPAN(i)))
                   || (released[i] && sgraced[i]
                       && PROJECT(sub[i] - 1) != PROJECT(e)));
            i++
        :: else -> break
        od
    }
}

/* A release waits for the scope's row lock (allocating.release). */
#ifdef RELEASE_UNLOCKED
#define RELEASE_LOCK true
#else
#define RELEASE_LOCK (dblock == 0)
#endif

/* One db engine: DbDriver.allocate / confirm / release. */
proctype DbEngine(byte e) {
    byte round, c, seen, used, gr;
    bool refused, ok;
    round = 0;
    do
    :: round < ROUNDS ->
        round++;
        ok = false;
        /* allocating.allocate, 1.: allocating.lock_scope */
        atomic { dblock == 0 -> dblock = e + 1 };
        /* 2.: the callable taken, read once the scope is locked */
        d_step { read_taken(e, seen) };
        atomic {
            /* 3.-4.: the rows past their grace period by the server's
             * clock at this statement (allocating.reclaim), freed unless
             * taken holds their CIDR, and the checked insert
             * (allocating.insert_if_free) */
            gr = 0;
            i = 0;
            do
            :: i < NC -> if :: graced[i] -> gr = gr | (1 << i)
                         :: else -> skip fi; i++
            :: else -> break
            od;
            used = 0;
            i = 0;
            do
            :: i < NC ->
                if
                :: row[i] == NONE && OVERLAP(gr, 1 << i) && !OVERLAP(SPAN(i), seen) ->
                    row[i] = 0; graced[i] = false
                :: row[i] != 0 -> used = used | SPAN(i)
                :: else -> skip
                fi;
                i++
            :: else -> break
            od;
            /* allocating.pick, then the insert */
            if
            :: !OVERLAP(SPAN(FIRST(e)), used | seen) -> c = FIRST(e); ok = true
            :: !OVERLAP(SPAN(LAST(e)), used | seen) -> c = LAST(e); ok = true
            :: else -> skip   /* PoolExhausted */
            fi;
            if
            :: ok ->
                row[c] = e + 1;
                check_released_only(e, c)
            :: else -> skip
            fi;
            dblock = 0
        };
        if
        :: ok ->
            /* the stack push: ModelRouter.add_interface */
            plug(e, c, refused);
            /* DbDriver.confirm cannot lose anything; DbDriver.release
             * (allocating.release, under the scope's row lock) after a
             * failed push, or later, when the network is deleted */
            if
            :: refused ->
                atomic {
                    RELEASE_LOCK ->
#ifdef RELEASE_AT_ONCE
                    row[c] = 0
#else
                    row[c] = NONE; graced[c] = false
#endif
                }
            :: !refused ->
                if
                :: skip   /* the network lives on */
                :: atomic {
                       RELEASE_LOCK ->
#ifdef RELEASE_AT_ONCE
                       row[c] = 0;
#else
                       row[c] = NONE;
                       graced[c] = false;
#endif
                       released[c] = true
                   };
                   if
                   :: d_step { unplug(c) }   /* Heat deletes the stack */
                   :: skip   /* its subnet stays on the router */
                   fi
                fi
            fi
        :: else -> skip
        fi;
        d_step { c = 0; seen = 0; used = 0; gr = 0; ok = false;
                 refused = false }
    :: round >= ROUNDS -> break
    od
}

/* The clock: a released row's grace period may pass at any step. */
active proctype Clock() {
    byte c;
end:
    do
    :: atomic {
           if
           :: c = 0
           :: c = 1
           :: c = 2
           fi;
           if
           :: row[c] == NONE && !graced[c] ->
               graced[c] = true;
               if
               :: sub[c] != 0 && released[c] -> sgraced[c] = true
               :: else -> skip
               fi
           :: else -> skip
           fi
       }
    od
}

#endif /* DB */

init {
    atomic {
#if defined(DB)
        run DbEngine(0);
        run DbEngine(1);
        run DbEngine(2)
#else
        run LockEngine(0);
        run LockEngine(1);
        run LockEngine(2)
#endif
    }
}
