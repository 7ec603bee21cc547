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

"""oslo.concurrency file locks and records beside them: one host.

``lockutils.lock(name, external=True, lock_path=...)`` takes a semaphore of
this process first and then the lock file, so it excludes threads and
processes alike; ``external_lock()`` alone would let two threads of one
process both "hold" a file lock. The lock path is always passed
explicitly: lockutils would otherwise read the global configuration.
"""

import contextlib
import os

from oslo_concurrency import lockutils
from oslo_log import log as logging

from murano_cidr.engine.drivers.lock import backend
from murano_cidr.engine.drivers.lock import file_records
from murano_cidr import exceptions

LOG = logging.getLogger(__name__)

#: This process's semaphores of the file locks: the driver's own, never
#: oslo.concurrency's process-wide ones, which the host process uses.
_semaphores = lockutils.Semaphores()


def _forget_semaphores():
    # NOTE: a child forked while a thread held one would inherit it held,
    # by a thread it does not have; it drops its parent's allocator, and
    # the file locks (fcntl's, per process) are not inherited.
    global _semaphores
    _semaphores = lockutils.Semaphores()


os.register_at_fork(after_in_child=_forget_semaphores)


def _check_process_locking():
    # NOTE: lockutils reads [oslo_concurrency] disable_process_locking from
    # the process-wide configuration, not from the one we were given. With
    # it set, "external" locks exclude threads only, and two engines would
    # both hold every reservation.
    if lockutils.CONF.oslo_concurrency.disable_process_locking:
        raise exceptions.InvalidConfig(
            group="oslo_concurrency", option="disable_process_locking",
            reason="the lock driver needs inter-process locks; unset it or "
            "set [cidr_allocator] coordination_url")


class FileLockBackend(backend.LockBackend):
    """Inter-process file locks under one directory.

    :param lock_path: the lock directory; created (mode 0700) if missing.
    :raises murano_cidr.exceptions.InvalidConfig: if the directory cannot be
        created or written, or process locking is disabled.
    """

    def __init__(self, lock_path):
        self.lock_path = lock_path
        self.description = "file locks under %s" % lock_path
        _check_process_locking()
        try:
            os.makedirs(lock_path, mode=0o700, exist_ok=True)
        except OSError as e:
            raise exceptions.InvalidConfig(
                group="oslo_concurrency", option="lock_path",
                reason="cannot create %s: %s" % (lock_path, e))
        if not os.access(lock_path, os.W_OK | os.X_OK):
            raise exceptions.InvalidConfig(
                group="oslo_concurrency", option="lock_path",
                reason="%s is not writable by this user" % lock_path)
        self.records = file_records.FileRecords(lock_path, self.description)

    def _unavailable(self, error):
        return exceptions.LockUnavailable(url=self.description,
                                          reason=str(error))

    @contextlib.contextmanager
    def scope_lock(self, name):
        _check_process_locking()
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(lockutils.lock(
                    name, external=True, lock_path=self.lock_path,
                    do_log=False, semaphores=_semaphores))
            except OSError as e:
                raise self._unavailable(e)
            yield
