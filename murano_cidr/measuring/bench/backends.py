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

"""The driver/backend pairs the benchmark measures, and their baselines.

A backend says how to configure its driver, whether its service answers
(an unreachable one is skipped, with the reason in the output), and what
one bare operation of that service costs, measured in the same run: one
plain INSERT and its commit on the same database, through a bare
SQLAlchemy engine (no oslo.db), one lock acquire/release on the same lock
backend. Driver timings divided by that baseline read the
same on a fast or a slow machine.
"""

import contextlib
import dataclasses
import os
import typing
import uuid

from oslo_concurrency import lockutils
from oslo_log import log as logging
import sqlalchemy as sa

from murano_cidr.engine.drivers.db import options as db_options
from murano_cidr.measuring.bench import timing
from murano_cidr.measuring import cleanup
from murano_cidr import messages
from murano_cidr.operator.drivers import commands as driver_commands
from murano_cidr import opts

LOG = logging.getLogger(__name__)

DEFAULT_MYSQL_URL = ("mysql+pymysql://openstack_citest:openstack_citest"
                     "@127.0.0.1/openstack_citest")
DEFAULT_POSTGRESQL_URL = ("postgresql+psycopg2://openstack_citest:"
                          "openstack_citest@127.0.0.1/openstack_citest")
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379"

#: Every backend, in output order.
NAMES = ("random", "legacy", "db-sqlite", "db-mysql", "db-postgresql",
         "lock-file", "lock-redis")

#: The services behind a backend.
NONE = "none"
SQL = "sql"
FILE_LOCK = "file-lock"
TOOZ = "tooz"

_BASELINE_TABLE = "murano_cidr_bench_baseline"

#: Every scope this process's benchmarks make starts with it; the rows of
#: these scopes are removed at the end of a run (see :func:`new_scope`).
SCOPE_PREFIX = cleanup.run_prefix("bench")


def new_scope():
    """Return a new scope (router id) for a benchmark.

    :returns: :data:`SCOPE_PREFIX` and a unique suffix.
    """
    return SCOPE_PREFIX + uuid.uuid4().hex[:16]


@dataclasses.dataclass
class Backend(object):
    """One driver on one backend.

    :ivar name: e.g. ``db-mysql``.
    :ivar driver: the driver's entry point name.
    :ivar kind: the service behind it, which decides its probe and
        baseline: :data:`NONE`, :data:`SQL`, :data:`FILE_LOCK` or
        :data:`TOOZ`.
    :ivar config: extra configuration, ``{group: {option: value}}``.
    :ivar url: the service's URL, if any (database or lock service).
    """

    name: str
    driver: str
    kind: str = NONE
    config: typing.Dict[str, typing.Dict[str, typing.Any]] = (
        dataclasses.field(default_factory=dict))
    url: typing.Optional[str] = None

    def groups(self, pool, state_path):
        """Return the whole configuration of this backend's driver."""
        groups = {opts.GROUP: dict(pool, driver=self.driver,
                                   state_path=state_path)}
        for group, values in self.config.items():
            groups.setdefault(group, {}).update(values)
        return groups

    def probe(self):
        """Return None if the service answers, else why it does not."""
        try:
            if self.kind == SQL:
                engine = sa.create_engine(self.url)
                try:
                    with engine.connect() as conn:
                        conn.execute(sa.text("SELECT 1"))
                finally:
                    engine.dispose()
            elif self.kind == TOOZ:
                import redis
                client = redis.Redis.from_url(self.url,
                                              socket_connect_timeout=2)
                try:
                    client.ping()
                finally:
                    client.close()
        except Exception as e:
            return "%s is unreachable: %s" % (
                messages.safe_url(self.url), messages.one_line(e))
        return None

    def prepare(self, conf):
        """Create what the driver needs (its ``prepare()`` hook).

        :param conf: the driver's configuration.
        """
        driver_commands.prepare(conf, self.driver)

    def baseline(self, conf, repeat):
        """Time one bare operation of the service.

        :param conf: the driver's configuration (for the lock path).
        :param repeat: how many operations to time.
        :returns: ``(what, p50 seconds)``, or None for drivers without a
            service.
        """
        if self.kind == SQL:
            return "INSERT transaction", _insert_baseline(self.url, repeat)
        if self.kind == FILE_LOCK:
            path = os.path.join(opts.state_path(conf), "baseline-locks")
            return ("file lock acquire/release",
                    _file_lock_baseline(path, repeat))
        if self.kind == TOOZ:
            return ("tooz lock acquire/release",
                    _tooz_lock_baseline(self.url, repeat))
        return None


@contextlib.contextmanager
def insert_operation(url):
    """Give one plain INSERT and its commit, as a callable.

    A bare SQLAlchemy engine (no oslo.db) on a table of its own, dropped at
    the end: the floor an allocation (one transaction) is measured against.

    :param url: the database's URL.
    """
    engine = sa.create_engine(url)
    metadata = sa.MetaData()
    table = sa.Table(
        _BASELINE_TABLE + "_" + uuid.uuid4().hex[:8], metadata,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("value", sa.String(64), nullable=False))
    metadata.create_all(engine)
    try:
        def insert():
            with engine.begin() as conn:
                conn.execute(table.insert().values(value=uuid.uuid4().hex))
        insert()
        yield insert
    finally:
        metadata.drop_all(engine)
        engine.dispose()


def _insert_baseline(url, repeat):
    with insert_operation(url) as insert:
        return timing.percentile(
            [timing.time_call(insert)[0] for _ in range(repeat)], 0.5)


def _file_lock_baseline(path, repeat):
    os.makedirs(path, exist_ok=True)

    def lock():
        with lockutils.lock("baseline", external=True, lock_path=path):
            pass
    return timing.percentile(
        [timing.time_call(lock)[0] for _ in range(repeat)], 0.5)


def _tooz_lock_baseline(url, repeat):
    from tooz import coordination
    coordinator = coordination.get_coordinator(
        url, ("murano-cidr-bench-" + uuid.uuid4().hex).encode())
    coordinator.start(start_heart=True)
    try:
        lock = coordinator.get_lock(b"murano-cidr-bench-baseline")

        def cycle():
            lock.acquire()
            lock.release()
        return timing.percentile(
            [timing.time_call(cycle)[0] for _ in range(repeat)], 0.5)
    finally:
        coordinator.stop()


def database_kind(url):
    """Tell which db backend a database URL is for.

    :param url: an SQLAlchemy URL.
    :returns: ``sqlite``, ``mysql`` or ``postgresql``; None for another
        database or a URL that cannot be parsed.
    """
    try:
        name = sa.engine.url.make_url(url).get_backend_name()
    except Exception:
        return None
    return name if name in ("sqlite", "mysql", "postgresql") else None


def backends(mysql_url=DEFAULT_MYSQL_URL,
             postgresql_url=DEFAULT_POSTGRESQL_URL,
             redis_url=DEFAULT_REDIS_URL, sqlite_url=None):
    """Return every :class:`Backend`, by name.

    :param sqlite_url: the SQLite database of ``db-sqlite`` (a file in the
        driver's state directory if None).
    """
    db = db_options.GROUP
    return {
        "random": Backend("random", "random"),
        "legacy": Backend("legacy", "legacy"),
        "db-sqlite": Backend("db-sqlite", "db", SQL,
                             {db: {"connection": sqlite_url}}, sqlite_url),
        "db-mysql": Backend("db-mysql", "db", SQL,
                            {db: {"connection": mysql_url}}, mysql_url),
        "db-postgresql": Backend("db-postgresql", "db", SQL,
                                 {db: {"connection": postgresql_url}},
                                 postgresql_url),
        "lock-file": Backend("lock-file", "lock", FILE_LOCK),
        "lock-redis": Backend("lock-redis", "lock", TOOZ,
                              {opts.GROUP: {"coordination_url": redis_url}},
                              redis_url),
    }
