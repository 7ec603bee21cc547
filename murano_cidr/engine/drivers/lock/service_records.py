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

"""Reservation records in Redis, etcd and ZooKeeper.

tooz offers locks, not keys, and keeps its client private; each store here
has a client of its own (redis-py, etcd3gw, kazoo), built from the same
coordination URL and bounded as the coordinator's is. Every call goes
through ``request(what, function)``, the lock backend's bounded call that
turns a failure into :class:`~murano_cidr.exceptions.LockUnavailable`.

* Redis: a key with a ``PX`` expiry, written with ``SET NX``, deleted by a
  compare-and-delete script. With Sentinel, every call goes to the master
  the Sentinels name, on a connection of its own, and a record is written
  with ``ROLE`` and ``WAIT 1`` on that connection: a record a stale master
  granted, or that no replica acknowledged, is not used (the rule of
  :mod:`~murano_cidr.engine.drivers.lock.redis_sentinel`).
* etcd3: a key on a lease of the hold time, created by a transaction that
  requires the key absent, deleted by one that compares its value; each
  call goes to the next member of the URL when one cannot be reached.
* ZooKeeper: a persistent znode whose data holds its expiry, created if
  absent, replaced and deleted by version; a request is sent again
  (kazoo's retry) when the session moves to another server.
"""

import threading
import urllib.parse

from murano_cidr.engine.drivers.lock import redis_sentinel
from murano_cidr.engine.drivers.lock import reservations
from murano_cidr import exceptions
from murano_cidr import messages

_COMPARE_AND_DELETE = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('del', KEYS[1]) else return 0 end")


class RedisRecords(reservations.RecordStore):
    """Records as Redis keys with a ``PX`` expiry.

    :param url: the coordination URL.
    :param seconds: how long each connection and answer may take.
    :param request: the lock backend's bounded call.
    :param replicas: replicas that must acknowledge a record (Sentinel).
    """

    expires_itself = True

    def __init__(self, url, seconds, request, replicas):
        self._url = url
        self._seconds = seconds
        self._request = request
        self._replicas = replicas
        self._master = redis_sentinel.master_name(url)
        parts = urllib.parse.urlsplit(url)
        self._address = (parts.hostname, parts.port or 6379)
        self._options, _ = redis_sentinel.client_options(url, seconds)
        db = urllib.parse.parse_qs(parts.query).get("db")
        if db:
            self._options["db"] = int(db[-1])
        self._client = None

    def _call(self, what, function):
        import redis

        def call():
            if self._master:
                host, port = redis_sentinel.discover(self._url,
                                                     self._seconds)
                client = redis.Redis(host=host, port=port,
                                     single_connection_client=True,
                                     **self._options)
                try:
                    return function(client)
                finally:
                    client.close()
            if self._client is None:
                host, port = self._address
                self._client = redis.Redis(host=host, port=port,
                                           **self._options)
            return function(self._client)

        return self._request(what, call)

    def read(self, name):
        data = self._call("cannot read the record %s" % name,
                          lambda client: client.get(name))
        return data, data

    def create(self, name, data, version, hold):
        if version is not None:
            # NOTE: a record Redis still has is live; Redis drops it.
            return False
        px = max(1, int(hold * 1000))
        if not self._master:
            return bool(self._call(
                "cannot write the record %s" % name,
                lambda client: client.set(name, data, nx=True, px=px)))

        def write(client):
            pipe = client.pipeline(transaction=False)
            pipe.execute_command("ROLE")
            pipe.set(name, data, nx=True, px=px)
            pipe.execute_command("WAIT", self._replicas,
                                 int(self._seconds * 500))
            role, written, acknowledged = pipe.execute()
            role = role[0].decode() if isinstance(role[0], bytes) else role[0]
            if written and (role != "master"
                            or int(acknowledged) < self._replicas):
                client.eval(_COMPARE_AND_DELETE, 1, name, data)
                raise exceptions.LockUnavailable(
                    url=messages.safe_url(self._url),
                    reason="the record %s was written on a %s that %d "
                    "replica(s) acknowledged, %d needed" % (
                        name, role, int(acknowledged), self._replicas))
            return bool(written)

        return self._call("cannot write the record %s" % name, write)

    def delete(self, name, data):
        return bool(self._call(
            "cannot delete the record %s" % name,
            lambda client: client.eval(_COMPARE_AND_DELETE, 1, name, data)))

    def close(self):
        if self._client is not None:
            self._client.close()


class EtcdRecords(reservations.RecordStore):
    """Records as etcd keys on a lease of the hold time.

    Each call goes to the members of the URL in turn
    (:class:`~murano_cidr.engine.drivers.lock.etcd_members.Members`). A create
    that the member lost on the way may have been applied: the key that
    then exists holds this record's data, so a create that finds it
    counts as written. A delete cut off the same way is reported as not
    done (the caller treats the reservation as lost).

    :param url: the coordination URL.
    :param seconds: how long each HTTP request may take.
    :param request: the lock backend's bounded call.
    """

    expires_itself = True

    def __init__(self, url, seconds, request):
        # NOTE: imported here, as etcd3gw is: only etcd engines load it.
        from murano_cidr.engine.drivers.lock import etcd_members
        self._members = etcd_members.Members(url, seconds)
        self._request = request

    def _call(self, what, function):
        return self._request(what, lambda: self._members.call(function))

    @staticmethod
    def _bytes(value):
        return value.encode("utf-8") if isinstance(value, str) else value

    def read(self, name):
        values = self._call("cannot read the record %s" % name,
                            lambda client: client.get(name))
        data = self._bytes(values[0]) if values else None
        return data, data

    def create(self, name, data, version, hold):
        if version is not None:
            # NOTE: a key etcd still has is live; its lease drops it.
            return False

        def create(client):
            lease = client.lease(max(1, int(hold)))
            if client.create(name, data, lease=lease):
                return True
            values = client.get(name)
            return bool(values) and self._bytes(values[0]) == self._bytes(
                data)

        return bool(self._call("cannot write the record %s" % name, create))

    def delete(self, name, data):
        import base64

        def encode(value):
            return base64.b64encode(self._bytes(value)).decode("ascii")

        txn = {"compare": [{"key": encode(name), "result": "EQUAL",
                            "target": "VALUE", "value": encode(data)}],
               "success": [{"request_delete_range": {"key": encode(name)}}],
               "failure": []}
        result = self._call("cannot delete the record %s" % name,
                            lambda client: client.transaction(txn))
        return bool(result.get("succeeded"))


class ZooKeeperRecords(reservations.RecordStore):
    """Records as persistent znodes, each with its expiry in its data.

    :param url: the coordination URL.
    :param options: kazoo's options (:class:`.tooz_clients.ZooKeeper`).
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
        from kazoo import client as kazoo_client
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
        from kazoo import exceptions as kazoo_exceptions

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
        from kazoo import exceptions as kazoo_exceptions

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
        def delete(client):
            current, stat = client.get(self._path(name))
            if current != data:
                return False
            client.delete(self._path(name), version=stat.version)
            return True

        return self._call("cannot delete the record %s" % name, delete)

    def close(self):
        with self._mutex:
            client, self._client = self._client, None
        if client is not None:
            client.stop()
            client.close()
