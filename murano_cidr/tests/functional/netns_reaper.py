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

"""Delete a test's namespaces when the test process dies without cleanup.

A test process killed with SIGKILL (a CI job's timeout, a developer's
kill) runs no cleanup: the servers it started keep running, reparented to
init, in namespaces that stay. :class:`~.netns.ServerHost` starts this
reaper at set-up, in a session of its own, with its standard input the
read end of a pipe whose only writer is the test process. The kernel
closes that pipe however the test process ends; at end-of-file the reaper
deletes every namespace whose name starts with the host's tag, killing
what runs in them (see :func:`~.netns_plumbing.delete_tagged`). After a
normal cleanup there is nothing left for it to delete.

Run as ``python -m murano_cidr.tests.functional.netns_reaper TAG``.

A test's worker processes that stay in the machine's namespace are not
the reaper's: each calls :func:`exit_with_test` instead.
"""

import multiprocessing
from multiprocessing import connection
import os
import sys
import threading

from murano_cidr.tests.functional import netns_plumbing


def main(tag):
    """Wait for end-of-file on standard input, then delete ``tag``'s.

    :param tag: the host's tag, ``mcidr-PID-XXXX``.
    """
    sys.stdin.buffer.read()
    netns_plumbing.delete_tagged(tag)


def exit_with_test():
    """End this worker process when the test process that started it ends.

    A worker of the ``forkserver`` or ``spawn`` context waiting on its
    queue would otherwise wait for ever once the test was killed. Call it
    in the worker, after :func:`~.netns.enter` (it starts a thread).
    """
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch():
        connection.wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


if __name__ == "__main__":
    main(sys.argv[1])
