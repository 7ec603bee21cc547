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

"""The members of an etcd cluster, named by one coordination URL.

``etcd3+http://h1:2379,h2:2379,h3:2379[?options]`` names three members,
as a ZooKeeper URL names its hosts. etcd3gw's client talks to one member,
so :class:`Members` keeps one client per member and sends a call to the
next member when one cannot be reached (the connection fails or times
out, or the member answers that it cannot serve: etcd3gw's
``ConnectionFailedError`` and ``ConnectionTimeoutError``). Any member
serves any request of the cluster, so this is failover, not a retry: a
call goes to two members at most, each once, so that it ends within the
bound of two requests.
"""

import functools
import urllib.parse

from oslo_utils import netutils

from murano_cidr import exceptions

#: etcd's client port.
DEFAULT_PORT = 2379


def members(url):
    """Return the ``(host, port)`` of each member a URL names, in order.

    :param url: an ``etcd3``, ``etcd3+http`` or ``etcd3+https`` URL.
    :raises murano_cidr.exceptions.InvalidConfig: if a member is empty,
        has no host, or a port that is not a TCP port.
    """
    netloc = urllib.parse.urlsplit(url).netloc.rpartition("@")[2]
    if not netloc:
        return [("localhost", DEFAULT_PORT)]
    found = []
    for member in netloc.split(","):
        try:
            host, port = netutils.parse_host_port(member, DEFAULT_PORT)
        except ValueError as e:
            reason = "bad port: %s" % e
        else:
            reason = (None if host and 0 < port < 65536
                      else "no host" if not host
                      else "port %d is not from 1 to 65535" % port)
        if reason is not None:
            raise exceptions.InvalidConfig(
                option="coordination_url",
                reason="%r is not an etcd member (host:port, several "
                "separated by commas: etcd3+http://h1:2379,h2:2379): %s"
                % (member, reason))
        found.append((host, port))
    return found


class Members(object):
    """One etcd3gw client per member of the URL, used in turn.

    :param url: the coordination URL.
    :param seconds: how long one request to one member may take, unless
        the URL sets ``timeout``.
    :raises murano_cidr.exceptions.InvalidConfig: for a bad member or
        ``timeout``.
    """

    #: How many members one call tries at most: a call waits for two
    #: requests at most, as a call to one member did (a late request,
    #: then a best-effort one), so it ends within about ``lock_timeout``.
    BOUND = 2

    def __init__(self, url, seconds):
        import etcd3gw
        parts = urllib.parse.urlsplit(url)
        query = {k: v[-1] for k, v in
                 urllib.parse.parse_qs(parts.query).items()}
        api = query.get("api_version")
        self.addresses = members(url)
        try:
            seconds = float(query.get("timeout", seconds))
        except ValueError:
            seconds = 0
        if not seconds > 0:
            raise exceptions.InvalidConfig(
                option="coordination_url",
                reason="timeout=%s is not a number of seconds"
                % query["timeout"])
        self.seconds = seconds
        self._clients = [
            etcd3gw.client(
                host=host, port=port,
                protocol="https" if parts.scheme.endswith("https")
                else "http",
                ca_cert=query.get("ca_cert"), cert_key=query.get("cert_key"),
                cert_cert=query.get("cert_cert"), timeout=seconds,
                api_path="/%s/" % api if api else None)
            for host, port in self.addresses]
        for client in self._clients:
            if getattr(client, "timeout", None) is None:
                # NOTE: an older etcd3gw (2023.2's 2.1.0) keeps the
                # timeout on its requests session, which requests never
                # reads: a blackholed member would hold every call.
                client.session.request = functools.partial(
                    client.session.request, timeout=seconds)
        # NOTE: a member that failed is asked last from then on: a lost
        # member costs its timeout once, not at every call.
        self._first = 0

    def order(self):
        """Return the members' indexes in the order a call tries them."""
        count = len(self._clients)
        return [(self._first + i) % count for i in range(count)]

    def call(self, function):
        """Call ``function(client)`` on the first member that answers.

        :attr:`BOUND` members are tried at most. A member that fails
        goes to the back of the order, so the next call starts with the
        next one.

        :raises etcd3gw.exceptions.Etcd3Exception: the member's error
            when a member answered with an error; ``ConnectionFailedError``
            naming each member tried when none could be reached.
        """
        from etcd3gw import exceptions as etcd3gw_exceptions
        reasons = []
        for index in self.order()[:self.BOUND]:
            try:
                result = function(self._clients[index])
            except (etcd3gw_exceptions.ConnectionFailedError,
                    etcd3gw_exceptions.ConnectionTimeoutError) as e:
                host, port = self.addresses[index]
                reasons.append("%s:%d: %s: %s" % (
                    host, port, type(e).__name__,
                    " ".join((e.detail_text or str(e)).split())))
                self._first = (index + 1) % len(self._clients)
                continue
            return result
        raise etcd3gw_exceptions.ConnectionFailedError(
            "no etcd member answered: %s" % "; ".join(reasons))
