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

"""Test hosts in network namespaces of the test's own, and network faults.

:class:`ServerHost` creates a network namespace joined to the machine by a
veth pair whose two addresses come from a /30 of ``198.18.0.0/15`` (the
range RFC 2544 sets aside for benchmarking) that nothing on the machine
uses. A server started with :meth:`ServerHost.popen` runs inside it and
listens on :attr:`ServerHost.address`; the test's processes, in the
machine's namespace, reach it there. Faults are iptables rules inside the
server's namespace only (never the machine's)::

    host = self.useFixture(netns.ServerHost())
    server = host.popen(["redis-server", "--bind", host.address, ...])
    host.blackhole()     # every packet to the server is dropped
    host.heal()          # every fault removed
    host.loss(0.3)       # 30 % of the packets dropped, both ways
    host.freeze()        # SIGSTOP to every process of the namespace
    host.thaw()          # SIGCONT to them

A client that must be cut off alone (one client partitioned while others
go on) lives in a namespace of its own, joined to the server's by a second
veth pair (:meth:`ServerHost.add_client`); a worker process moves itself
into it with :func:`enter` before it opens any connection::

    client = host.add_client()
    # in the worker: netns.enter(client.name)
    host.partition(client)

The machine's kernel has no netem, so a slow link is
:class:`murano_cidr.tests.functional.slowlink.DelayProxy`.

Cleanup (``cleanUp``, also when the test failed) kills every process
started with :meth:`ServerHost.popen` and deletes the namespaces, which
deletes their veth pairs with them. A test process killed outright leaves
that to :mod:`~murano_cidr.tests.functional.netns_reaper`. Tests call
:func:`require` first: it skips on a machine without root, ``ip`` or
``iptables`` and fails in CI.
"""

import ctypes
import ctypes.util
import os
import random
import shutil
import signal
import subprocess
import sys

import fixtures

from murano_cidr.tests.functional import netns_plumbing

#: Seconds a killed server gets between SIGTERM and SIGKILL.
STOP_TIMEOUT = 10

_CLONE_NEWNET = 0x40000000


def missing():
    """Say what this machine lacks for network-namespace tests.

    :returns: None when they can run, else a reason.
    """
    if os.geteuid() != 0:
        return "root (network namespaces and iptables)"
    for tool in ("ip", "iptables"):
        if shutil.which(tool) is None:
            return "the %r command" % tool
    return None


def require(test):
    """Skip ``test`` on a laptop, fail it in CI, when namespaces cannot run.

    :param test: a :class:`murano_cidr.tests.base.TestCase`.
    """
    reason = missing()
    test.require_service(reason is None,
                         "network namespaces (%s)" % reason)


def enter(name):
    """Move the calling process (its current thread) into namespace ``name``.

    Call it first thing in a worker process, before it opens a socket or
    starts a thread: sockets opened later belong to the namespace.

    :param name: a namespace's name (:attr:`ClientHost.name`).
    :raises OSError: if the kernel refuses.
    """
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    fd = os.open(os.path.join("/run/netns", name), os.O_RDONLY)
    try:
        if libc.setns(fd, _CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, "setns(%s): %s" % (name, os.strerror(err)))
    finally:
        os.close(fd)


class _Namespace(object):
    """A namespace's name and its side of a link."""

    def __init__(self, name, address, peer_address, interface):
        #: The namespace's name (``ip netns exec NAME ...``).
        self.name = name
        #: This namespace's address on its link.
        self.address = address
        #: The other end's address.
        self.peer_address = peer_address
        #: The interface name, inside the namespace.
        self.interface = interface

    def command(self, argv):
        """Return ``argv`` prefixed to run inside this namespace."""
        return ["ip", "netns", "exec", self.name] + list(argv)

    def run(self, *argv):
        """Run a command inside this namespace (raises if it fails).

        :returns: its output.
        """
        return netns_plumbing.run(*self.command(argv))


class ClientHost(_Namespace):
    """A client's own namespace (give its :attr:`name` to :func:`enter`)."""


class ServerHost(fixtures.Fixture):
    """A network namespace for a server, joined to the machine by veth.

    :ivar name: the namespace's name.
    :ivar address: the server's address (inside the namespace).
    :ivar host_address: the machine's end of the link.
    """

    def __init__(self):
        super().__init__()
        self.processes = []
        self.clients = []
        self._namespaces = []
        self._links = 0
        tag = "%s-%d-%04x" % (netns_plumbing.PREFIX, os.getpid(),
                              random.getrandbits(16))
        self._tag = tag
        self._reaper = None
        self.name = tag + "-s"
        self._server = None

    # -- set-up and cleanup --------------------------------------------

    def _setUp(self):
        reason = missing()
        if reason:
            raise RuntimeError("network namespaces need %s" % reason)
        with netns_plumbing.lock():
            netns_plumbing.sweep()
        # Started first, stopped last: deletes what is left if this
        # process is killed before its cleanup.
        self._reaper = subprocess.Popen(
            [sys.executable, "-m", "murano_cidr.tests.functional."
             "netns_reaper", self._tag], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, start_new_session=True)
        self.addCleanup(self._stop_reaper)
        self.addCleanup(self._delete_namespaces)
        self.addCleanup(self._kill_processes)
        self._add_namespace(self.name)
        self._run_in(self.name, "ip", "link", "set", "lo", "up")
        host_if, ns_if = self._interfaces()
        with netns_plumbing.lock():
            link = netns_plumbing.pick_link()
            host_ip, ns_ip = (str(ip) for ip in link.iter_hosts())
            netns_plumbing.run("ip", "link", "add", host_if, "type",
                               "veth", "peer", "name", ns_if)
            self.addCleanup(self._delete_link, host_if)
            netns_plumbing.run("ip", "link", "set", ns_if, "netns", self.name)
            netns_plumbing.run("ip", "addr", "add", "%s/30" % host_ip,
                               "dev", host_if)
        netns_plumbing.run("ip", "link", "set", host_if, "up")
        self._run_in(self.name, "ip", "addr", "add", "%s/30" % ns_ip,
                     "dev", ns_if)
        self._run_in(self.name, "ip", "link", "set", ns_if, "up")
        self._server = _Namespace(self.name, ns_ip, host_ip, ns_if)
        self.address = ns_ip
        self.host_address = host_ip

    def _interfaces(self):
        # Interface names have at most 15 characters.
        self._links += 1
        base = "mc%04x%02d%d" % (random.getrandbits(16),
                                 os.getpid() % 97, self._links)
        base = base[:13]
        return base + "a", base + "b"

    def _add_namespace(self, name):
        netns_plumbing.run("ip", "netns", "add", name)
        self._namespaces.append(name)

    @staticmethod
    def _run_in(name, *argv):
        return netns_plumbing.run("ip", "netns", "exec", name, *argv)

    def _kill_processes(self):
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _stop_reaper(self):
        self._reaper.stdin.close()
        self._reaper.wait(STOP_TIMEOUT)

    def _delete_namespaces(self):
        errors = [netns_plumbing.delete(name)
                  for name in reversed(self._namespaces)]
        self._namespaces = []
        if any(errors):
            raise RuntimeError("; ".join(e for e in errors if e))

    @staticmethod
    def _delete_link(host_if):
        # For a set-up that failed before the peer moved into the namespace.
        subprocess.run(["ip", "link", "del", host_if],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    # -- processes -----------------------------------------------------

    def command(self, argv, user=None):
        """Return ``argv`` prefixed to run in the server's namespace.

        :param user: a user name to run it as (``setpriv``), e.g. a server
            that refuses to run as root.
        """
        if user:
            argv = ["setpriv", "--reuid=" + user, "--regid=" + user,
                    "--init-groups", "--"] + list(argv)
        return self._server.command(argv)

    def run(self, *argv, **kwargs):
        """Run a command in the server's namespace; raise if it fails.

        :param user: as for :meth:`command`.
        :returns: its output.
        """
        return netns_plumbing.run(*self.command(argv, kwargs.get("user")))

    def popen(self, argv, user=None, **kwargs):
        """Start a process in the server's namespace, killed at cleanup.

        :param argv: the command line.
        :param user: as for :meth:`command`.
        :param kwargs: for :class:`subprocess.Popen`.
        :returns: the :class:`subprocess.Popen`.
        """
        kwargs.setdefault("stdin", subprocess.DEVNULL)
        process = subprocess.Popen(self.command(argv, user), **kwargs)
        self.processes.append(process)
        return process

    # -- clients -------------------------------------------------------

    def add_client(self):
        """Create a client namespace that reaches :attr:`address`.

        :returns: a :class:`ClientHost`.
        """
        name = "%s-c%d" % (self._tag, len(self.clients) + 1)
        self._add_namespace(name)
        self._run_in(name, "ip", "link", "set", "lo", "up")
        client_if, server_if = self._interfaces()
        with netns_plumbing.lock():
            link = netns_plumbing.pick_link()
            client_ip, server_ip = (str(ip) for ip in link.iter_hosts())
            self._run_in(name, "ip", "link", "add", client_if, "type",
                         "veth", "peer", "name", server_if)
            self._run_in(name, "ip", "link", "set", server_if, "netns",
                         self.name)
            self._run_in(name, "ip", "addr", "add", "%s/30" % client_ip,
                         "dev", client_if)
        self._run_in(name, "ip", "link", "set", client_if, "up")
        self._run_in(self.name, "ip", "addr", "add", "%s/30" % server_ip,
                     "dev", server_if)
        self._run_in(self.name, "ip", "link", "set", server_if, "up")
        # The server's address is local to its namespace: no forwarding.
        self._run_in(name, "ip", "route", "add", "%s/32" % self.address,
                     "via", server_ip)
        client = ClientHost(name, client_ip, server_ip, client_if)
        client.server_interface = server_if
        self.clients.append(client)
        return client

    # -- faults --------------------------------------------------------

    def iptables(self, *rule):
        """Add an iptables rule inside the server's namespace."""
        self._server.run("iptables", "-w", *rule)

    def blackhole(self):
        """Drop every packet that reaches the server: no answer, no RST."""
        self.iptables("-A", "INPUT", "-j", "DROP")

    def loss(self, probability=0.3):
        """Drop ``probability`` of the packets, both ways, at random."""
        for chain in ("INPUT", "OUTPUT"):
            self.iptables("-A", chain, "-m", "statistic", "--mode",
                          "random", "--probability", str(probability),
                          "-j", "DROP")

    def partition(self, client):
        """Cut ``client`` (a :class:`ClientHost`) off, both ways."""
        self.iptables("-A", "INPUT", "-i", client.server_interface,
                      "-j", "DROP")
        self.iptables("-A", "OUTPUT", "-o", client.server_interface,
                      "-j", "DROP")

    def _signal_all(self, signum):
        for pid in netns_plumbing.run("ip", "netns", "pids",
                                      self.name).split():
            try:
                os.kill(int(pid), signum)
            except OSError:
                pass

    def freeze(self):
        """Stop every process of the server's namespace (SIGSTOP).

        The kernel still accepts connections and acknowledges data, as
        for a server whose disk hangs; nothing answers.
        """
        self._signal_all(signal.SIGSTOP)
        self.addCleanup(self.thaw)

    def thaw(self):
        """Let the processes stopped by :meth:`freeze` go on (SIGCONT)."""
        self._signal_all(signal.SIGCONT)

    def heal(self):
        """Remove every fault: the network works again."""
        for chain in ("INPUT", "OUTPUT"):
            self._server.run("iptables", "-w", "-F", chain)
