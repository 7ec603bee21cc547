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

"""A model of Neutron's subnet-pool allocator, for the benchmark to beat.

This models the algorithm of Neutron's ``SubnetAllocator`` (read in
``neutron/ipam/subnet_alloc.py`` of openstack/neutron at commit
:data:`NEUTRON_COMMIT`: ``_lock_subnetpool``, ``_get_allocated_cidrs``,
``_get_available_prefix_list`` and ``_allocate_any_subnet``); it is written
here from that reading and is not Neutron's code. One allocation is one
transaction:

1. read the pool's row and prefixes, and lock the row by compare-and-swap
   on its ``hash`` (``UPDATE ... WHERE hash = <read>``; no row updated
   means another allocation won: the whole transaction is tried again);
2. read every CIDR allocated from the pool;
3. the free space is the pool's prefixes minus those, as a compacted
   :class:`netaddr.IPSet`; its CIDRs are ordered smallest block first
   (longest prefix), then by address;
4. the first block that holds the requested prefix length gives its first
   subnet of that length, which is inserted; commit.

What Neutron does besides (quotas, gateway and allocation pools, the IPAM
driver's own rows, the API layer) is left out, so the model is, if
anything, faster than Neutron. It keeps its rows in tables of its own,
created by :meth:`NeutronModel.create` and dropped by
:meth:`NeutronModel.close` (see :func:`model`).
"""

import contextlib
import uuid

import netaddr
from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
import sqlalchemy as sa

from murano_cidr.engine.drivers.db import compat

#: The Neutron commit whose ``subnet_alloc.py`` this models.
NEUTRON_COMMIT = "2131d26f73262ec89a5d3e3e0d65521df4908e65"

#: Every table of the model starts with it, then a per-run suffix.
TABLE_PREFIX = "murano_cidr_bench_neutron_"

#: How often a lost compare-and-swap is tried again.
MAX_RETRIES = 10


class NoPrefixSpace(Exception):
    """No free block of the pool holds the prefix length asked for."""


class NeutronModel(object):
    """One subnet pool, allocated from as Neutron's allocator does.

    Build it with :meth:`create`; :meth:`close` drops its tables.

    :param engine: a SQLAlchemy engine on the database.
    :param suffix: the suffix of this model's table names.
    """

    def __init__(self, engine, suffix):
        self.engine = engine
        self.pool_id = str(uuid.uuid4())
        self.metadata = sa.MetaData()
        self.pools = sa.Table(
            TABLE_PREFIX + "pools_" + suffix, self.metadata,
            sa.Column("id", sa.String(36), primary_key=True),
            sa.Column("hash", sa.String(36), nullable=False))
        self.prefixes = sa.Table(
            TABLE_PREFIX + "prefixes_" + suffix, self.metadata,
            sa.Column("pool_id", sa.String(36), primary_key=True),
            sa.Column("cidr", sa.String(64), primary_key=True))
        self.subnets = sa.Table(
            TABLE_PREFIX + "subnets_" + suffix, self.metadata,
            sa.Column("id", sa.String(36), primary_key=True),
            sa.Column("pool_id", sa.String(36), nullable=False, index=True),
            sa.Column("cidr", sa.String(64), nullable=False))

    @classmethod
    def create(cls, engine, prefixes):
        """Create the tables and one pool of ``prefixes``.

        :param engine: a SQLAlchemy engine on the database.
        :param prefixes: the pool's networks (strings or
            :class:`netaddr.IPNetwork`).
        :returns: a :class:`NeutronModel`.
        """
        self = cls(engine, uuid.uuid4().hex[:8])
        self.metadata.create_all(engine)
        try:
            with engine.begin() as conn:
                conn.execute(self.pools.insert().values(
                    id=self.pool_id, hash=str(uuid.uuid4())))
                conn.execute(self.prefixes.insert(), [
                    {"pool_id": self.pool_id, "cidr": str(p)}
                    for p in prefixes])
        except Exception:
            self.close()
            raise
        return self

    def fill(self, cidrs):
        """Insert allocated subnets, untimed, in one transaction.

        :param cidrs: CIDR strings.
        :returns: their subnet ids, in order.
        """
        rows = [{"id": str(uuid.uuid4()), "pool_id": self.pool_id,
                 "cidr": str(c)} for c in cidrs]
        if rows:
            with self.engine.begin() as conn:
                conn.execute(self.subnets.insert(), rows)
        return [row["id"] for row in rows]

    def _lock_pool(self, conn):
        """Read the prefixes; lock the pool row by compare-and-swap."""
        current = conn.execute(compat.select(self.pools.c.hash).where(
            self.pools.c.id == self.pool_id)).first()
        if current is None:
            raise NoPrefixSpace("subnet pool %s is gone" % self.pool_id)
        swapped = conn.execute(self.pools.update().where(sa.and_(
            self.pools.c.id == self.pool_id,
            self.pools.c.hash == current[0])).values(
                hash=str(uuid.uuid4()))).rowcount
        if not swapped:
            raise db_exc.RetryRequest(NoPrefixSpace(
                "subnet pool %s is in use" % self.pool_id))
        return [row[0] for row in conn.execute(
            compat.select(self.prefixes.c.cidr).where(
                self.prefixes.c.pool_id == self.pool_id))]

    def _free_blocks(self, conn, prefixes):
        """Return the free CIDRs, smallest block first, then by address."""
        allocated = [row[0] for row in conn.execute(
            compat.select(self.subnets.c.cidr).where(
                self.subnets.c.pool_id == self.pool_id))]
        free = netaddr.IPSet(prefixes) - netaddr.IPSet(allocated)
        free.compact()
        # sorted() is stable: blocks of one size stay in address order.
        return sorted(free.iter_cidrs(), key=lambda n: n.prefixlen,
                      reverse=True)

    @oslo_db_api.wrap_db_retry(max_retries=MAX_RETRIES, retry_interval=0.01)
    def allocate(self, prefixlen):
        """Allocate a subnet of ``prefixlen`` in one transaction.

        :param prefixlen: the prefix length asked for (e.g. 24).
        :returns: ``(subnet id, CIDR string)``.
        :raises NoPrefixSpace: if no free block holds one.
        :raises oslo_db.exception.RetryRequest: if the pool row was
            changed under every attempt.
        """
        with self.engine.begin() as conn:
            prefixes = self._lock_pool(conn)
            for block in self._free_blocks(conn, prefixes):
                if prefixlen >= block.prefixlen:
                    cidr = str(next(block.subnet(prefixlen)))
                    subnet_id = str(uuid.uuid4())
                    conn.execute(self.subnets.insert().values(
                        id=subnet_id, pool_id=self.pool_id, cidr=cidr))
                    return subnet_id, cidr
        raise NoPrefixSpace("no free /%d in subnet pool %s"
                            % (prefixlen, self.pool_id))

    def release(self, subnet_ids):
        """Delete subnets, untimed, in one transaction.

        :param subnet_ids: ids returned by :meth:`allocate` or
            :meth:`fill`.
        """
        if subnet_ids:
            with self.engine.begin() as conn:
                conn.execute(self.subnets.delete().where(
                    self.subnets.c.id.in_(list(subnet_ids))))

    def cidrs(self):
        """Return every allocated CIDR of the pool, as strings."""
        with self.engine.connect() as conn:
            return [row[0] for row in conn.execute(
                compat.select(self.subnets.c.cidr).where(
                    self.subnets.c.pool_id == self.pool_id))]

    def close(self):
        """Drop the model's tables."""
        self.metadata.drop_all(self.engine)


@contextlib.contextmanager
def model(url, prefixes):
    """Give a :class:`NeutronModel` on a database; drop it at the end.

    Its tables are dropped however the block ends (an error, Ctrl-C or a
    signal the command turns into an exception), as the benchmark's
    baseline table is.

    :param url: the database's SQLAlchemy URL.
    :param prefixes: the pool's networks.
    """
    engine = sa.create_engine(url)
    try:
        neutron = NeutronModel.create(engine, prefixes)
        try:
            yield neutron
        finally:
            neutron.close()
    finally:
        engine.dispose()
