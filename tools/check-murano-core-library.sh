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

# Check that 'murano-cidr-manage murano patch-core-library' makes its change
# to the core library (meta/io.murano) of every Murano branch the library
# installs on, that the result is still YAML with the new .destroy, and that
# a second run changes nothing, and that --revert restores the class
# byte for byte. Each branch's core library is copied out
# with 'git archive'; the clone itself is not touched.
#
# Usage: tools/check-murano-core-library.sh MURANO_CLONE [MANAGE]
#
# MURANO_CLONE is a clone of openstack/murano with its -eol/-eom tags and
# stable branches; MANAGE is the murano-cidr-manage to run (default: the
# one on PATH). Not run by CI: it needs Murano's source.

set -eu

clone=${1:?usage: $0 MURANO_CLONE [MANAGE]}
manage=${2:-murano-cidr-manage}
python=$(dirname "$(command -v "$manage")")/python
[ -x "$python" ] || python=python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

branches="ussuri-eol victoria-eol wallaby-eol xena-eol yoga-eom zed-eom stable/2023.1 stable/2023.2"

status=0
for branch in $branches; do
    ref=$branch
    git -C "$clone" rev-parse -q --verify "$ref^{commit}" >/dev/null \
        || ref=origin/$branch
    tree="$work/${branch//\//-}"
    mkdir -p "$tree"
    if ! git -C "$clone" archive "$ref" meta/io.murano | tar -x -C "$tree"
    then
        echo "$branch: no meta/io.murano"
        status=1
        continue
    fi
    if ! "$manage" murano patch-core-library "$tree" >"$work/out" 2>&1; then
        echo "$branch: refused: $(tail -1 "$work/out")"
        status=1
        continue
    fi
    added=$(grep -c '^+[^+]' "$work/out" || true)
    class="$tree/meta/io.murano/Classes/resources/NeutronNetwork.yaml"
    if ! "$python" -c 'import sys, yaml
methods = yaml.safe_load(open(sys.argv[1]))["Methods"]
assert "releaseCidr(id($))" in str(methods[".destroy"]), methods[".destroy"]
assert "confirmCidr(id($))" in str(methods["deploy"])' "$class"; then
        echo "$branch: the changed class is not as expected"
        status=1
        continue
    fi
    if ! "$manage" murano patch-core-library "$tree" | grep -q "nothing to do"
    then
        echo "$branch: a second run changed it again"
        status=1
        continue
    fi
    git -C "$clone" show "$ref:meta/io.murano/Classes/resources/NeutronNetwork.yaml" \
        >"$work/original"
    if ! "$manage" murano patch-core-library --revert "$tree" >/dev/null ||
        ! cmp -s "$work/original" "$class"; then
        echo "$branch: --revert did not restore the class byte for byte"
        status=1
        continue
    fi
    echo "$branch: changed ($added lines added), still YAML; a second run" \
        "changes nothing; --revert restores it byte for byte"
done
exit $status
