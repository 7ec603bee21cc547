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

"""A call into a client library that returns at a deadline, whatever it does.

:func:`call` runs the call in a thread of its own (a green one under
eventlet, as the client's sockets are) and stops waiting at the deadline;
the call goes on until the library gives up, and what it took by then is
given back (``undo``). Which client waits need it:
:doc:`/reference/lock-driver`.
"""

from concurrent import futures
import threading

from oslo_log import log as logging

LOG = logging.getLogger(__name__)


class Late(Exception):
    """The call did not end within its deadline; it goes on meanwhile."""


def _undo_late(future, undo):
    if future.cancelled() or future.exception() is not None:
        return
    try:
        undo(future.result())
    except Exception as e:
        LOG.warning("Could not undo a call that ended after its deadline: "
                    "%s", e)


def call(seconds, function, undo=None):
    """Return ``function()`` if it ends within ``seconds``.

    :param seconds: how long to wait for it; 0 or less: not at all (the
        call is still made, in the background).
    :param function: what to call, without arguments.
    :param undo: called with the result if the call succeeds after its
        deadline passed (e.g. to release a lock taken too late).
    :returns: what ``function`` returned.
    :raises Late: if it did not end in time.
    :raises: whatever ``function`` raised in time.
    """
    future = futures.Future()

    def run():
        future.set_running_or_notify_cancel()
        try:
            result = function()
        except BaseException as e:
            future.set_exception(e)
        else:
            future.set_result(result)

    threading.Thread(target=run, name="murano-cidr-lock-call",
                     daemon=True).start()
    done, _ = futures.wait([future], timeout=max(0.0, seconds))
    if not done:
        if undo is not None:
            # NOTE: runs at once if the call ended in the meantime.
            future.add_done_callback(lambda f: _undo_late(f, undo))
        raise Late()
    return future.result()
