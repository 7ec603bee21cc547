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

# Check that each documented engine patch applies to every Murano branch of
# its family and, given a Python with Murano's requirements and murano-cidr
# installed, that Murano's own test_net_explorer passes on the patched tree.
#
# Usage: tools/check-murano-patches.sh MURANO_CLONE [PYTHON]
#
# MURANO_CLONE is a clone of openstack/murano (with its -eol/-eom tags and
# stable branches); it is checked out branch after branch, so use a clone
# made for this. Not run by CI: it needs Murano's source.

set -eu

clone=${1:?usage: $0 MURANO_CLONE [PYTHON]}
python=${2:-}
patches=$(cd "$(dirname "$0")/../doc/source/integration/patches" && pwd)
home=$(mktemp -d)
trap 'rm -rf "$home"; git -C "$clone" checkout -q -f - 2>/dev/null || true' EXIT

# family patch, apply options, branches (tags or remote branches)
families=(
    "murano-train-2023.2.diff|-C1|train-eol"
    "murano-train-2023.2.diff||ussuri-eol victoria-eol wallaby-eol xena-eol yoga-eom zed-eom origin/stable/2023.1 origin/stable/2023.2"
    "murano-newton-stein.diff|--exclude=murano/tests/*|newton-eol"
    "murano-newton-stein.diff||ocata-eol pike-eol queens-eol rocky-eol stein-eol"
    "murano-mitaka.diff||mitaka-eol"
    "murano-liberty.diff||liberty-eol"
)

status=0
for entry in "${families[@]}"; do
    IFS='|' read -r patch options branches <<<"$entry"
    for branch in $branches; do
        git -C "$clone" checkout -q -f "$branch"
        # shellcheck disable=SC2086
        if ! git -C "$clone" apply $options "$patches/$patch"; then
            echo "$branch: $patch does not apply"
            status=1
            continue
        fi
        result="applies"
        test_file="$clone/murano/tests/unit/engine/system/test_net_explorer.py"
        if [ -n "$python" ] && [ -f "$test_file" ]; then
            if (cd "$clone" && HOME="$home" "$python" -m testtools.run \
                    murano.tests.unit.base \
                    murano.tests.unit.engine.system.test_net_explorer \
                    >"$home/out" 2>&1); then
                result="$result; test_net_explorer: $(grep '^Ran' "$home/out")"
            else
                result="$result; test_net_explorer FAILED (see below)"
                tail -5 "$home/out"
                status=1
            fi
        fi
        echo "$branch: $patch $result"
    done
done
exit $status
