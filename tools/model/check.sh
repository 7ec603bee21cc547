#!/bin/bash
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

# Model-check tools/model/cidr.pml with spin (tox -e model).
#
# The exhaustive runs must find no error (they print the state count and
# the time); each mutant must yield a counterexample. Exit 0 only if all
# of that holds. Needs spin and gcc (bindep.txt, profile test).

set -u
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/murano-cidr-model.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$here/cidr.pml" "$work/"
cd "$work" || exit 2
failed=0
# pan's maximum search depth; the runs reach under 400.
depth=${MODEL_DEPTH:-100000}

# run NAME EXPECT DEFINES...: EXPECT is "pass" or "fail".
run() {
    local name=$1 expect=$2
    shift 2
    local start end out errors
    start=$(date +%s.%N)
    if ! spin -a "$@" cidr.pml > spin.log 2>&1; then
        echo "$name: spin could not read the model:"
        cat spin.log
        failed=1
        return
    fi
    # COLLAPSE: the state vectors compressed, exhaustively (no bitstate).
    gcc -O2 -w -DSAFETY -DCOLLAPSE -o pan pan.c || { failed=1; return; }
    out=$(./pan -m"$depth" 2>&1)
    end=$(date +%s.%N)
    errors=$(echo "$out" | sed -n 's/.*errors: \([0-9]*\).*/\1/p')
    if [ "${errors:-1}" = 0 ] \
            && echo "$out" | grep -q "max search depth too small"; then
        # pan cut the search at -m and still says "errors: 0": it was
        # not exhaustive, so it proves nothing.
        echo "$name: the search was cut at depth $depth (MODEL_DEPTH):" \
            "not exhaustive"
        failed=1
        rm -f pan pan.* ./*.trail
        return
    fi
    states=$(echo "$out" | sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p')
    printf '%-28s %-5s errors=%s states=%s time=%.1fs\n' "$name" \
        "$expect" "${errors:-?}" "${states:-?}" \
        "$(awk "BEGIN { print $end - $start }")"
    if [ "$expect" = pass ] && [ "${errors:-1}" != 0 ]; then
        echo "$out" | grep -E "assertion violated|invalid end state"
        spin -t -p "$@" cidr.pml | tail -40
        failed=1
    elif [ "$expect" = fail ] && [ "${errors:-0}" = 0 ]; then
        echo "$name: no counterexample found; the model misses this bug"
        failed=1
    elif [ "$expect" = fail ] && ! echo "$out" | grep -q "assertion violated"
    then
        # A mutant must break a property, not merely stop (a deadlock).
        echo "$name: an error, but no property violated:"
        echo "$out" | grep -E "error|invalid end state"
        failed=1
    fi
    rm -f pan pan.* ./*.trail
}

# The protocols as they are: every interleaving.
run "lock (etcd, Redis)" pass
run "lock + scope lock" pass -DSCOPE_LOCK
run "lock, no expiry (strict)" pass -DNO_EXPIRY
run "db release path" pass -DDB
# The bugs the model exists for.
run "mutant: no second read" fail -DNO_SECOND_READ
run "mutant: per-CIDR locks" fail -DPER_CIDR_LOCKS
run "mutant: release at once" fail -DDB -DRELEASE_AT_ONCE
run "mutant: unlocked release" fail -DDB -DRELEASE_UNLOCKED
exit $failed
