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

"""The plumbing under the test hosts of :mod:`.netns`.

Running ``ip`` commands, deleting namespaces (with what runs in them) and
sweeping those of killed test processes, and picking a /30 of
:data:`LINK_RANGE` that nothing on the machine uses, under a file lock
shared by every test process of the machine.
"""

import os
import random
import signal
import subprocess
import tempfile

import netaddr
from oslo_concurrency import lockutils

#: Where the test links' /30s are taken from (RFC 2544's benchmarking
#: range: never routed, normally unused on a machine).
LINK_RANGE = netaddr.IPNetwork("198.18.0.0/15")

#: Every namespace and interface name of these fixtures starts with it.
PREFIX = "mcidr"


def run(*argv):
    """Run a command; raise with its output if it fails."""
    result = subprocess.run(argv, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT,
                            universal_newlines=True, timeout=30)
    if result.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (
            " ".join(argv), result.returncode, result.stdout.strip()))
    return result.stdout


def delete(name):
    """Kill what runs in namespace ``name`` and delete it.

    :returns: None, or why it could not be deleted.
    """
    # A worker that entered a client namespace is killed too, so the
    # namespace really goes away.
    result = subprocess.run(["ip", "netns", "pids", name],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            universal_newlines=True)
    for pid in result.stdout.split():
        if int(pid) != os.getpid():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
    try:
        run("ip", "netns", "del", name)
    except RuntimeError as e:
        return str(e)
    return None


def sweep():
    """Delete the namespaces of test processes that were killed.

    A test process killed with SIGKILL runs no cleanup; its namespaces
    carry its process id (``mcidr-PID-...``).
    """
    for line in run("ip", "netns", "list").splitlines():
        name = (line.split() or [""])[0]
        parts = name.split("-")
        if len(parts) < 3 or parts[0] != PREFIX or not parts[1].isdigit():
            continue
        if not os.path.exists("/proc/%s" % parts[1]):
            delete(name)


def delete_tagged(tag):
    """Delete every namespace named ``tag-...``, and what runs in it."""
    for line in run("ip", "netns", "list").splitlines():
        name = (line.split() or [""])[0]
        if name.startswith(tag + "-"):
            delete(name)


def _used_networks():
    """Every IPv4 network the machine's addresses and routes cover."""
    used = []
    lines = (run("ip", "-o", "-4", "addr", "show").splitlines()
             + run("ip", "-4", "route", "show", "table", "all").splitlines())
    for line in lines:
        for word in line.split():
            try:
                net = netaddr.IPNetwork(word)
            except (netaddr.AddrFormatError, ValueError, TypeError):
                continue
            if net.version == 4 and net.prefixlen > 0:
                used.append(net)
    return netaddr.IPSet(used)


def pick_link():
    """Return a /30 of :data:`LINK_RANGE` nothing on the machine uses."""
    used = _used_networks()
    links = list(LINK_RANGE.subnet(30))
    for _ in range(100):
        link = random.choice(links)
        if not (used & netaddr.IPSet([link])):
            return link
    raise RuntimeError("no free /30 in %s" % LINK_RANGE)


def lock():
    """The file lock under which a link's /30 is picked and assigned."""
    # NOTE: two tests (or two engineers' runs) may create links at once;
    # the pick and the address assignment happen under one file lock.
    return lockutils.lock("murano-cidr-netns", external=True,
                          lock_path=tempfile.gettempdir())
