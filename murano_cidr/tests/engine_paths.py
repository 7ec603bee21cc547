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

"""What an engine carries on each of its paths, and how far one pick walks.

Each path runs in a fresh interpreter: the engine of
:mod:`murano_cidr.tests.unit.test_runtime_imports` (Murano's package-type
loader loads the plugin) allocates, confirms and releases one network
through ``NetworkExplorer``, then takes one path:

``happy``
    a second, warm pick, during which every call and every return between
    two modules of murano-cidr is counted (:data:`TRANSITIONS`);
``PoolExhausted``
    the router takes 10.0.0.0/8, the whole pool;
``DatabaseUnavailable`` / ``LockUnavailable``
    the service goes away: the engine reaches a server through a TCP relay
    of its own, which is cut; an SQLite database is held by another
    writer; a lock directory becomes a plain file;
``ReservationLost``
    another process (``murano-cidr release``) releases the network between
    its pick and its confirm.

The report names the typed error the path met (for ``ReservationLost``,
the warning the engine logged) and the lines of murano-cidr imported.
"""

import json
import os
import subprocess
import sys

import fixtures

from murano_cidr.tests.unit import test_runtime_imports as imports

#: The lines of murano-cidr an engine may import on any path, whatever its
#: driver and back end (issue 32; doc/source/contributor/wings.rst).
LINE_LIMIT = 4000

#: The engines still over :data:`LINE_LIMIT`, held to their figure of
#: today so that nothing adds to them until they are cut: the ``db``
#: driver (4,895 on SQLite, 4,830 on PostgreSQL, 4,718 on MariaDB) and
#: the ``lock`` driver on a lock service (4,264 on Redis, 4,322 on etcd,
#: 4,377 on ZooKeeper).
OVER_LIMIT = {"db": 4900, "lock service": 4400}

#: A warm pick of the ``lock`` driver on a lock service goes through the
#: tooz back end too: 46 transitions on Redis and etcd, 52 on ZooKeeper
#: (whose scope lock queues), held to that figure like the lines.
OVER_TRANSITIONS = {"lock service": 52}

#: The module transitions one warm pick may take, through the plugin.
TRANSITIONS = 40

#: The pool of every path: the default (from 10.0.0.0, 250 environments),
#: which one /8 fills. (In a pool of a few subnets the pick's draws would
#: meet the candidates handed out before, and its walk vary between runs.)
POOL = ""

#: The modules every wing may import.
SHARED = ("murano_cidr._i18n", "murano_cidr.exceptions",
          "murano_cidr.messages", "murano_cidr.opts")

#: The paths of each driver, besides ``happy``.
ERRORS = {"db": ("PoolExhausted", "DatabaseUnavailable", "ReservationLost"),
          "lock": ("PoolExhausted", "LockUnavailable", "ReservationLost"),
          "random": ("PoolExhausted",), "legacy": ("PoolExhausted",)}

#: Before the engine: the relay to the server, and the engine's arguments.
_PRELUDE = r'''
import json, socket, sys, threading


class Relay(object):
    # 127.0.0.1:port -> the server, until cut.

    def __init__(self, port):
        self.server, self.sockets, self.live = port, [], True
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while self.live:
            try:
                client, _ = self.listener.accept()
                server = socket.create_connection(("127.0.0.1", self.server))
            except OSError:
                return
            self.sockets += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self.pump, args=(a, b),
                                 daemon=True).start()

    def pump(self, a, b):
        try:
            data = a.recv(65536)
            while data:
                b.sendall(data)
                data = a.recv(65536)
        except OSError:
            pass

    def cut(self):
        self.live = False
        for s in [self.listener] + self.sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


spec = json.loads(sys.argv[1])
relay = Relay(spec["server"]) if spec["server"] else None
port = str(relay.port if relay else 0)
sys.argv = ["-c"] + [a.replace("{port}", port) for a in spec["argv"]]
cli = spec["cli"]
'''

#: After the engine is set up: the paths, and the report.
_PATHS = r'''
import collections, subprocess

path = spec["path"]


def own(name):
    return name.split(".")[0] == "murano_cidr" and not name.startswith(
        "murano_cidr.tests")


def lines():
    found = {}
    for name, module in sorted(sys.modules.items()):
        if own(name) and getattr(module, "__file__", None):
            with open(module.__file__) as f:
                found[name] = len(f.readlines())
    return found


class Warnings(logging.Handler):
    def __init__(self):
        logging.Handler.__init__(self, logging.WARNING)
        self.seen = []

    def emit(self, record):
        self.seen.append(record.getMessage())


warned = Warnings()
logging.getLogger().addHandler(warned)
engine = explorer(mock.MagicMock(), "region")
engine.get_available_cidr("router", "net")
engine.confirm_cidr("net")
engine.release_cidr("net")
report = {"error": None}
if path == "happy":
    crossed = collections.Counter()

    def profile(frame, event, arg):
        if event in ("call", "return") and frame.f_back is not None:
            a = frame.f_back.f_globals.get("__name__", "")
            b = frame.f_globals.get("__name__", "")
            if a != b and own(a) and own(b):
                crossed[" <-> ".join(sorted((a, b)))] += 1

    sys.setprofile(profile)
    engine.get_available_cidr("router", "warm")
    sys.setprofile(None)
    report["transitions"] = sum(crossed.values())
    report["crossed"] = crossed.most_common()
elif path == "ReservationLost":
    engine.get_available_cidr("router", "lost")
    done = subprocess.run([cli, "--config-file", os.path.join(
        state, "murano.conf"), "release", "lost"], capture_output=True)
    assert done.returncode == 0, done
    del warned.seen[:]
    engine.confirm_cidr("lost")
    report["error"] = "ReservationLost" if any(
        "ReservationLost" in m for m in warned.seen) else warned.seen
else:
    if path == "PoolExhausted":
        Neutron.subnets.append("10.0.0.0/8")
    elif relay is not None:
        relay.cut()
    elif driver == "db":
        import sqlite3
        holder = sqlite3.connect(connection[len("sqlite:///"):],
                                 isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
    else:
        locks = os.path.join(state, "locks")
        os.rename(locks, locks + ".gone")
        open(locks, "w").close()
    try:
        engine.get_available_cidr("router", "error")
    except Exception as e:
        report["error"] = type(e).__name__
report["modules"] = lines()
print(json.dumps(report))
sys.stdout.flush()
os._exit(0)
'''


def engine_path(test, driver, path, connection=None, conf="", server=None):
    """Run one path of an engine in a fresh interpreter; return its report.

    :param test: the test case (for its temporary directory).
    :param driver: the driver's name.
    :param path: ``happy`` or a typed error's name (see the module).
    :param connection: the ``db`` driver's database URL, where ``{port}``
        stands for the relay's port; an SQLite file of the test's own if
        None.
    :param conf: more configuration, in the file's words; ``{port}`` as
        for ``connection``.
    :param server: the port of the server the relay reaches, or None.
    :returns: a dictionary: ``error``, the name of the typed error met (or
        the warnings seen instead), ``modules``, the lines by module of
        murano-cidr imported, and on the happy path ``transitions`` and
        ``crossed``, the count of each pair of modules.
    """
    state = test.useFixture(fixtures.TempDir()).path
    connection = connection or "sqlite:///%s/c.db" % state
    if driver == "db":
        imports.sync_database(state, connection.replace(
            "{port}", str(server)))
    spec = {"server": server, "path": path,
            "cli": os.path.join(os.path.dirname(sys.executable),
                                "murano-cidr"),
            "argv": [driver, state, json.dumps(imports.OWN_GROUPS),
                     connection, POOL + conf]}
    done = subprocess.run(
        [sys.executable, "-c", _PRELUDE + imports.ENGINE_SETUP + _PATHS,
         json.dumps(spec)], capture_output=True, text=True, timeout=300)
    test.assertEqual(0, done.returncode, done.stderr[-3000:])
    return json.loads(done.stdout.splitlines()[-1])


def assertCarriesItsWingOnly(test, report, path, limit=LINE_LIMIT,
                             transitions=TRANSITIONS):
    """Assert what one path of an engine met and imported.

    The typed error of ``path`` was met, the engine imported at most
    ``limit`` lines of murano-cidr, all of its own wing and the shared
    modules, and a warm pick took at most ``transitions``.
    """
    if path != "happy":
        test.assertEqual(path, report["error"])
    modules = report["modules"]
    test.assertEqual([], [m for m in modules if not imports.inside(
        m, ("murano_cidr.engine",) + SHARED) and m != "murano_cidr"])
    test.assertLessEqual(sum(modules.values()), limit, modules)
    if path == "happy":
        test.assertLessEqual(report["transitions"], transitions,
                             report["crossed"])
