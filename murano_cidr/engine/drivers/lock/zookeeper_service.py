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

"""ZooKeeper through kazoo: the scope lock through tooz, records as znodes.

A record is a persistent znode whose data holds its expiry, created if
absent, replaced and deleted by version; a request is sent again (kazoo's
retry) when the session moves to another server.
"""

import threading
import urllib.parse

from kazoo import client as kazoo_client
from kazoo import exceptions as kazoo_exceptions
from kazoo.handlers import threading as kazoo_threading
from oslo_utils import netutils

from murano_cidr.engine.drivers.lock import backend
from murano_cidr.engine.drivers.lock import tooz_backend
from murano_cidr.engine.drivers.lock import tooz_queue


class ZooKeeper(tooz_queue.QueuedClient):
    """kazoo: the scope lock through tooz, records through a client of ours.

    The session's timeout is ``lock_timeout`` (the server must allow it:
    ``minSessionTimeout``, ``maxSessionTimeout``); kazoo keeps it alive
    itself, so tooz's heartbeat is not run. How its waits are bounded, and
    why: :doc:`/reference/lock-driver`.
    """

    heart = False

    def options(self, lock_timeout):
        retry = {"max_tries": -1, "delay": 0.1, "backoff": 2,
                 "max_delay": tooz_backend.MAX_RETRY_DELAY,
                 "deadline": lock_timeout}
        return {"timeout": lock_timeout, "connection_retry": dict(retry),
                "command_retry": dict(retry)}

    def records(self, url, lock_timeout, request):
        options = self.options(lock_timeout)
        return ZooKeeperRecords(url, options, request, lock_timeout)

    def hosts(self, url):
        netloc = urllib.parse.urlsplit(url).netloc.rpartition("@")[2]
        if "," not in netloc:
            return super().hosts(url)
        # NOTE: kazoo's host list, "h1:p1,h2:p2": urlsplit cannot read
        # its port.
        return [netutils.parse_host_port(host, 2181)
                for host in netloc.split(",") if host]

    def errors(self):
        return (kazoo_exceptions.KazooException,
                kazoo_threading.KazooTimeoutError)

    def lock_timeouts(self):
        # NOTE: tooz offers no public way to cancel a wait for a lock, and
        # kazoo's timeout restarts with each engine ahead that leaves (an
        # engine third in the queue could wait twice lock_wait_timeout).
        # kazoo's Lock.cancel() is public, but tooz keeps kazoo's lock in
        # a private attribute; upstream tooz would need a public
        # ZooKeeperLock.cancel() (or a kazoo wait bounded as a whole). The
        # driver stops waiting at its deadline instead.
        return (kazoo_exceptions.LockTimeout,)

    def closed(self, error):
        while error is not None:
            if isinstance(error, kazoo_exceptions.ConnectionClosedError):
                return True
            error = error.__cause__
        return False


class ZooKeeperRecords(backend.RecordStore):
    """Records as persistent znodes, each with its expiry in its data.

    :param url: the coordination URL.
    :param options: kazoo's options (:class:`ZooKeeper`).
    :param request: the lock backend's bounded call.
    :param seconds: how long each call may take.
    """

    #: Where the records are kept.
    ROOT = "/murano-cidr/reservations"

    def __init__(self, url, options, request, seconds):
        parts = urllib.parse.urlsplit(url)
        self._hosts = parts.netloc.rpartition("@")[2]
        self._options = options
        self._request = request
        self._seconds = seconds
        self._client = None
        self._mutex = threading.Lock()

    def _connected(self):
        with self._mutex:
            client = self._client
            if client is not None and client.connected:
                return client
            self._client = None
            if client is not None:
                client.stop()
                client.close()
            client = kazoo_client.KazooClient(hosts=self._hosts,
                                              **self._options)
            try:
                client.start(timeout=self._seconds)
            except BaseException:
                client.stop()
                client.close()
                raise
            self._client = client
            return client

    def _call(self, what, function):

        def call():
            client = self._connected()
            try:
                # NOTE: kazoo's retry (the client's command_retry, bounded
                # by lock_timeout, a fresh copy per call) sends a request
                # again once the session has moved to another server: a
                # server lost mid-request must not turn a held
                # reservation into a lost one.
                return client.retry(function, client)
            except (kazoo_exceptions.NoNodeError,
                    kazoo_exceptions.NodeExistsError,
                    kazoo_exceptions.BadVersionError):
                return False

        return self._request(what, call, self._seconds)

    def _path(self, name):
        return "%s/%s" % (self.ROOT, name)

    def read(self, name):
        def read(client):
            data, stat = client.get(self._path(name))
            return data, stat.version

        found = self._call("cannot read the record %s" % name, read)
        return found if found else (None, None)

    def create(self, name, data, version, hold):

        def write(client):
            try:
                if version is None:
                    client.create(self._path(name), data, makepath=True)
                else:
                    client.set(self._path(name), data, version=version)
            except (kazoo_exceptions.NodeExistsError,
                    kazoo_exceptions.BadVersionError):
                # A retry may find its own write, applied before the
                # connection was lost: the record then holds this data.
                return client.get(self._path(name))[0] == data
            return True

        return self._call("cannot write the record %s" % name, write)

    def delete(self, name, data):
        sent = []

        def delete(client):
            try:
                current, stat = client.get(self._path(name))
            except kazoo_exceptions.NoNodeError:
                # A retry after the connection was lost with the delete
                # sent: the server may have applied it. The record held
                # this data then, and is gone as asked.
                if sent:
                    return True
                raise
            if current != data:
                return False
            sent.append(stat.version)
            client.delete(self._path(name), version=stat.version)
            return True

        return self._call("cannot delete the record %s" % name, delete)

    def close(self):
        with self._mutex:
            client, self._client = self._client, None
        if client is not None:
            client.stop()
            client.close()
