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

"""Reservation records as small files in a lock directory: one host.

The records of the file locks (and of tooz's ``file://`` backend), kept
beside the lock files. oslo.concurrency's locks are taken with semaphores
of this module's own, never the process-wide ones the host process uses.
"""

import contextlib
import hashlib
import os
import uuid

from oslo_concurrency import lockutils

from murano_cidr.engine.drivers.lock import reservations
from murano_cidr import exceptions

_semaphores = lockutils.Semaphores()


def _forget_semaphores():
    # NOTE: a child forked while a thread held one would inherit it held,
    # by a thread it does not have.
    global _semaphores
    _semaphores = lockutils.Semaphores()


os.register_at_fork(after_in_child=_forget_semaphores)


class FileRecords(reservations.RecordStore):
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
