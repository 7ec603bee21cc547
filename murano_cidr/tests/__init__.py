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

"""murano-cidr's tests; settings applied before any test module loads."""

import os

import hypothesis


def in_ci():
    """Tell whether the tests run in CI, where nothing may be left to chance.

    ``.ci/run`` exports ``MURANO_CIDR_REQUIRE_SERVICES=1``; ``CI=true`` does
    the same.
    """
    return (os.environ.get("MURANO_CIDR_REQUIRE_SERVICES") == "1"
            or os.environ.get("CI", "").lower() == "true")


#: In CI, property tests draw the same examples on every run, so a gate
#: failure reproduces on a laptop (run with CI=true), and print the blob
#: that replays a failing example. (Recent hypothesis releases load a
#: similar built-in "ci" profile when CI is set; older ones do not.)
CI_PROFILE = "murano-cidr-ci"
hypothesis.settings.register_profile(
    CI_PROFILE, derandomize=True, database=None, print_blob=True,
    deadline=None)

# NOTE: here, in the package, so the profile is the default before a test
# module's @hypothesis.settings(...) copies it at import time.
if in_ci():
    hypothesis.settings.load_profile(CI_PROFILE)
