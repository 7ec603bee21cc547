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

"""tooz's ``file://`` and ``ipc://`` backends: one host, through tooz.

``file://`` keeps the records in its directory, as the file locks do;
``ipc://`` cannot keep them.
"""

import urllib.parse

from murano_cidr.engine.drivers.lock import file_service
from murano_cidr.engine.drivers.lock import tooz_queue


class Local(tooz_queue.QueuedClient):
    """``file://`` and ``ipc://``: locks die with their process."""

    heart = False

    def options(self, lock_timeout):
        return {}

    def records(self, url, lock_timeout, request):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "file" or not parts.path:
            return super().records(url, lock_timeout, request)
        return file_service.FileRecords(parts.path, parts.path)
