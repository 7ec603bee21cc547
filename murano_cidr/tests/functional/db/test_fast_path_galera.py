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

"""The db driver's fast path on a 3-node Galera cluster.

The shared fast-path tests on node 1, and two engines on two nodes whose
trusting inserts are in flight at once: the scope row's lock is per node,
so both hold it; certification lets one commit and the other is retried.
"""

import collections
import threading

import fixtures

from murano_cidr.drivers.db import queries
from murano_cidr.tests import fast_path
from murano_cidr.tests.functional.db import base
from murano_cidr.tests.functional.db import test_fast_path
from murano_cidr.tests.functional.db import test_galera

#: Seconds the two engines may take, together.
WATCHDOG = 60


class TestGalera(test_galera.GaleraBackend, test_fast_path.FastPathTests,
                 base.DbTestCase):
    own_id_sql = "SELECT CONNECTION_ID()"
    kill_sql = "KILL %d"

    def on_node(self, node, prefixlen):
        """A driver of one geometry connected to ``node``."""
        self.db_config(connection=self.galera.url(node, self.database))
        return self.allocator(prefixlen)

    def hold_first_inserts(self, *threads):
        """Hold each thread's first trusting insert until all made theirs.

        :param threads: the names of the threads.
        :returns: a counter of the scope locks taken, by thread name.
        """
        together = threading.Barrier(len(threads), timeout=WATCHDOG)
        locks = collections.Counter()
        held = set()
        real_lock = queries.lock_scope
        real_insert = queries.insert_unless_taken

        def lock_scope(*args, **kwargs):
            locks[threading.current_thread().name] += 1
            return real_lock(*args, **kwargs)

        def insert_unless_taken(*args, **kwargs):
            inserted = real_insert(*args, **kwargs)
            name = threading.current_thread().name
            if name in threads and name not in held:
                held.add(name)
                together.wait()
            return inserted

        for name, func in (("lock_scope", lock_scope),
                           ("insert_unless_taken", insert_unless_taken)):
            self.useFixture(fixtures.MonkeyPatch(
                "murano_cidr.drivers.db.queries." + name, func))
        return locks

    def test_the_loser_of_a_certification_conflict_is_retried(self):
        self.db_config(db_max_retries=5)
        mine, other = self.on_node(1, 24), self.on_node(2, 22)
        # Current at once: mine from its first allocation, other from the
        # full read of its first one.
        self.warm(mine)
        locks = self.hold_first_inserts("mine", "other")
        got = {}

        def allocate(name, driver):
            try:
                got[name] = driver.allocate(name, scope=fast_path.SCOPE)
            except Exception as e:
                got[name] = e

        threads = [threading.Thread(target=allocate, name=name,
                                    args=(name, driver), daemon=True)
                   for name, driver in (("mine", mine), ("other", other))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WATCHDOG)
        self.assertEqual([], [t.name for t in threads if t.is_alive()])
        self.assertEqual({"mine", "other"},
                         {name for name, cidr in got.items()
                          if isinstance(cidr, str)}, got)
        # Both locked at once; one of them again, after certification
        # refused its commit.
        self.assertEqual(3, sum(locks.values()), locks)
        for driver in (mine, other):
            self.assertSettledAtMost(driver, fast_path.SCOPE)
        self.fill(mine, "mine")
        self.assertScopeFull(mine)
