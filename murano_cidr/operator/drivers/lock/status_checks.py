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

"""The ``lock`` driver's check for ``murano-cidr-status upgrade check``.

It asks the lock service the driver would use (the driver's own backend
objects, never a coordinator of its own) whether it answers, or checks that
file locks can be created under the lock directory.
"""

import os
import socket
import tempfile

from oslo_upgradecheck import upgradecheck

from murano_cidr.engine.drivers.lock import options as lock_options
from murano_cidr.engine.drivers.lock import tooz_backend
from murano_cidr import exceptions
from murano_cidr import messages
from murano_cidr import opts

SUCCESS = upgradecheck.Code.SUCCESS
FAILURE = upgradecheck.Code.FAILURE


def writable_dir(path):
    """Return None if files can be created under ``path``, else why not.

    :param path: a directory, which may not exist yet (then its nearest
        existing parent must be writable).
    :returns: None, or the reason as a clause.
    """
    if os.path.isdir(path):
        try:
            with tempfile.TemporaryFile(dir=path):
                pass
        except OSError as e:
            return "cannot create a file in %s: %s" % (path, e.strerror or e)
        return None
    if os.path.exists(path):
        return "%s exists and is not a directory" % path
    parent = os.path.dirname(path.rstrip(os.sep)) or os.sep
    if parent == path:
        return "%s does not exist" % path
    reason = writable_dir(parent)
    if reason is not None:
        return "%s does not exist and %s" % (path, reason)
    return None


def tcp_probe(url, timeout):
    """Return None if a host of the URL accepts a connection.

    Every host the URL names is tried in turn (a ZooKeeper host list, the
    members of an etcd URL, the Sentinels of a Redis URL): the client uses
    any of them.

    :returns: None (also for a URL without host and port), or why no
        connection succeeded.
    """
    try:
        hosts = [(host, port) for host, port
                 in tooz_backend.for_url(url).hosts(url) if host and port]
    except (ValueError, exceptions.InvalidConfig) as e:
        return "bad URL: %s" % messages.clause(e)
    reasons = []
    for host, port in hosts:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
        except OSError as e:
            reasons.append("cannot connect to %s:%d: %s"
                           % (host, port, e.strerror or e))
        else:
            return None
    return "; ".join(reasons) or None


def probe(backend, timeout=5):
    """Tell whether a lock service answers, without keeping anything.

    The host and port are tried first: tooz clients retry a refused
    connection for a minute or more, and ``murano-cidr-status`` wants the
    answer at once. URLs without a host and port (``file://``) go straight
    to the coordinator.

    :param backend: a
        :class:`~murano_cidr.engine.drivers.lock.tooz_backend.ToozLockBackend`.
    :param timeout: seconds to wait for the connection.
    :returns: None, or why the service does not answer.
    """
    client = backend.client
    reason = tcp_probe(backend.url, timeout)
    if reason is None and (backend.request_seconds is not None
                           or not client.coordinated):
        reason = client.ping(backend.url, timeout)
    if reason is not None or not client.coordinated:
        return reason
    return backend.try_start()


def check_lock_service(conf):
    """The lock service answers, or file locks can be taken.

    :param conf: the configuration, its files read.
    :returns: an :class:`oslo_upgradecheck.upgradecheck.Result`.
    """
    group = conf[opts.GROUP]
    url = (group.coordination_url or "").strip()
    if not url:
        path = lock_options.lock_path(conf)
        reason = writable_dir(path)
        if reason is not None:
            return upgradecheck.Result(
                FAILURE, "File locks cannot be taken: %s. Fix the "
                "permissions or set [oslo_concurrency] lock_path." % reason)
        return upgradecheck.Result(
            SUCCESS, "File locks under %s (one host only; set "
            "[cidr_allocator] coordination_url when engines run on several "
            "hosts)." % path)
    shown = messages.safe_url(url)
    try:
        backend = tooz_backend.ToozLockBackend(url, group.lock_timeout,
                                               group.lock_wait_timeout)
    except exceptions.InvalidConfig as e:
        return upgradecheck.Result(FAILURE, "%s." % messages.clause(e))
    reason = probe(backend)
    if reason is not None:
        return upgradecheck.Result(
            FAILURE, "The lock service %s does not answer: %s. Check "
            "[cidr_allocator] coordination_url and that the service runs."
            % (shown, reason))
    return upgradecheck.Result(SUCCESS, "The lock service %s answers."
                               % shown)
