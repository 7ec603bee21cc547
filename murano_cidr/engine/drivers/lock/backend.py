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

"""What the ``lock`` driver needs from a lock service, and its blocks.

Each lock service is a module of its own, loaded by :func:`open_backend`
through the ``murano_cidr.lock_services`` entry points. The blocks:
:doc:`/reference/lock-driver`.
"""

import abc
import urllib.parse

import netaddr
import stevedore
from stevedore import exception as stevedore_exception

from murano_cidr.engine.drivers import lock as lock_package
from murano_cidr import exceptions
from murano_cidr import opts

#: The most blocks one reservation may hold.
MAX_BLOCKS = 256

#: Where each lock service's module is found, by :func:`service_name`.
NAMESPACE = "murano_cidr.lock_services"

#: The service of an unset ``coordination_url``: file locks.
FILE_LOCKS = "oslo.concurrency"


def blocks(net, prefixlen):
    """Return the aligned blocks of ``prefixlen`` that ``net`` overlaps.

    :param net: a :class:`netaddr.IPNetwork`.
    :returns: the :class:`netaddr.IPNetwork` blocks, in address order.
    """
    if net.prefixlen >= prefixlen:
        return [netaddr.IPNetwork((net.first, prefixlen),
                                  version=net.version).cidr]
    return list(net.cidr.subnet(prefixlen))


class RecordStore(object, metaclass=abc.ABCMeta):
    """Where a lock service keeps records; every change is conditional.

    Every method raises :class:`~murano_cidr.exceptions.LockUnavailable`
    when the service cannot be reached.
    """

    #: Whether the service drops a record at its ``expires`` itself.
    expires_itself = False

    @abc.abstractmethod
    def read(self, name):
        """Return ``(data, version)``; ``(None, None)`` if no record."""

    @abc.abstractmethod
    def create(self, name, data, version, hold):
        """Write ``data`` if the record is still at ``version``.

        :param version: what :meth:`read` returned; None: no record.
        :param hold: seconds the service keeps it, where it expires
            records itself.
        :returns: False if another record was written meanwhile.
        """

    @abc.abstractmethod
    def delete(self, name, data):
        """Delete the record if it still is ``data``; return False if not."""

    def close(self):
        """Drop the connection to the service, if any."""


class LockBackend(object, metaclass=abc.ABCMeta):
    """A lock service, as the ``lock`` driver uses it.

    :ivar description: what to name in messages (never a password).
    :ivar records: the :class:`RecordStore` of the reservation records.
    """

    description = None
    records = None

    @abc.abstractmethod
    def scope_lock(self, name):
        """Return a context manager holding the lock ``name`` while open.

        It holds nothing where the service does not serialise picks.

        :raises murano_cidr.exceptions.LockUnavailable: if the service
            cannot be reached, or the wait times out.
        """

    def close(self):
        """Drop the connections to the lock service, if any."""
        if self.records is not None:
            self.records.close()


def service_name(url):
    """Return the entry point of ``url``'s service (see ``setup.cfg``)."""
    if not url:
        return FILE_LOCKS
    parts = urllib.parse.urlsplit(url)
    if "sentinel" in urllib.parse.parse_qs(parts.query):
        return parts.scheme + "+sentinel"
    return parts.scheme


def _raise(_manager, _entry_point, error):
    raise error


def service(url):
    """Return the class of ``url``'s service (None: file locks).

    Its ``open(url, conf)`` returns the :class:`LockBackend`.

    :raises murano_cidr.exceptions.InvalidConfig: if no module of ours
        serves the URL, or the client library it needs is missing.
    """
    name = service_name(url)
    try:
        return stevedore.DriverManager(
            NAMESPACE, name, on_load_failure_callback=_raise).driver
    except stevedore_exception.NoMatches:
        parts = urllib.parse.urlsplit(url)
        # NOTE: the host without what precedes "@", which may be a password.
        shown = "%s://%s" % (parts.scheme, parts.netloc.rpartition("@")[2])
        raise exceptions.InvalidConfig(
            option="coordination_url",
            reason="%s names no lock service the lock driver can keep its "
            "reservations in (tried %r); use redis://, rediss://, "
            "etcd3+http://, etcd3+https://, zookeeper:// or file://"
            % (shown, name))
    except ImportError as e:
        raise missing_client(url, e)


def missing_client(url, error):
    """Return the error that names the extras to install for ``url``."""
    return exceptions.InvalidConfig(
        option="coordination_url",
        reason="the client library of %s is not installed (%s); install "
        "the extra of your lock service: %s"
        % (urllib.parse.urlsplit(url).scheme, error, " or ".join(
            "'pip install murano-cidr[%s]'" % extra
            for extra in lock_package.EXTRAS)))


def open_backend(conf):
    """Return the :class:`LockBackend` of ``conf`` (options registered).

    :raises murano_cidr.exceptions.InvalidConfig: naming the option at
        fault.
    """
    url = (conf[opts.GROUP].coordination_url or "").strip() or None
    return service(url).open(url, conf)
