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

"""The console scripts (thin: parse, call the library, print)."""

import warnings

# NOTE: where eventlet is installed (a Murano engine's environment, the
# tests'), tooz's futurist imports it, and recent eventlet releases warn on
# import that eventlet is deprecated: seven lines on standard error that a
# command's user cannot act on, before the command's own one line.
warnings.filterwarnings("ignore", message=r"\s*Eventlet is deprecated")
