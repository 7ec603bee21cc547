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
this module's own first and then the lock file, so it excludes threads and
processes alike; the lock path is always passed explicitly, and the
host process's semaphores are never used. A record is a small file beside
the lock files, changed under a file lock and renamed into place.
"""

import contextlib
import hashlib
import os
import uuid

from oslo_concurrency import lockutils
from oslo_log import log as logging

from murano_cidr.engine.drivers.lock import backend
from murano_cidr.engine.drivers.lock import options as lock_options
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
        self.records = FileRecords(lock_path, self.description)

    @classmethod
    def open(cls, url, conf):
        """Return the file locks of ``conf``'s lock directory."""
        return cls(lock_options.lock_path(conf))

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


class FileRecords(backend.RecordStore):
    """Records as small files beside the lock files of one host.

    Each record is read, compared and changed under a file lock (one of
    256, by the record name's digest), and written to a temporary file
    renamed over it,
    so a reader never sees half a record. A record stays until it is
    replaced or deleted; it is live until its expiry, by this host's
    clock.

    :param lock_path: the directory.
    :param description: how to name the directory in messages.
    """

    def __init__(self, lock_path, description):
        self.lock_path = lock_path
        self.description = description

    def _path(self, name):
        return os.path.join(self.lock_path, name + ".json")

    @contextlib.contextmanager
    def _changing(self, name):
        # NOTE: one of 256 locks, by the name's digest: lock files are
        # never deleted, and a lock per owner would leave one per network
        # ever deployed.
        lock = "murano-cidr-records-" + hashlib.sha256(
            name.encode("utf-8")).hexdigest()[:2]
        try:
            with lockutils.lock(lock, external=True, lock_path=self.lock_path,
                                do_log=False, semaphores=_semaphores):
                yield
        except OSError as e:
            raise exceptions.LockUnavailable(url=self.description,
                                             reason=str(e))

    def _read(self, name):
        try:
            with open(self._path(name), "rb") as f:
                return f.read()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise exceptions.LockUnavailable(url=self.description,
                                             reason=str(e))

    def read(self, name):
        data = self._read(name)
        return data, data

    def create(self, name, data, version, hold):
        with self._changing(name):
            if self._read(name) != version:
                return False
            path = self._path(name)
            temporary = "%s.%s.tmp" % (path, uuid.uuid4().hex)
            try:
                with open(temporary, "wb") as f:
                    f.write(data)
                os.replace(temporary, path)
            except OSError as e:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise exceptions.LockUnavailable(url=self.description,
                                                 reason=str(e))
        return True

    def delete(self, name, data):
        with self._changing(name):
            if self._read(name) != data:
                return False
            try:
                os.unlink(self._path(name))
            except OSError as e:
                raise exceptions.LockUnavailable(url=self.description,
                                                 reason=str(e))
        return True
