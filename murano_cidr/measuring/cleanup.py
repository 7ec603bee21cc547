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

"""The rows a measuring run made, and their removal.

``simulate`` and ``bench`` may be pointed at a real database (a cloud's,
or CI's shared one). Every scope a run makes is named with the run's own
prefix (:func:`run_prefix`), so at the end, also when the run failed or was
interrupted, :func:`remove_rows` deletes everything that run made, and
nothing else: its allocations, released ones included (the ``db`` driver
keeps those until their subnet has left the router), and its scopes' own
rows. Rows of any other scope are never read nor touched.
"""

import contextlib
import uuid

from oslo_log import log as logging
import sqlalchemy as sa

from murano_cidr.engine import allocator
from murano_cidr.engine.drivers.db import models
from murano_cidr import exceptions

LOG = logging.getLogger(__name__)

#: The db driver's tables a run writes to, children first.
_TABLES = (models.Allocation.__table__, models.Scope.__table__)


def run_prefix(tool):
    """Return a new prefix for the scopes of one run of a tool.

    :param tool: ``simulate`` or ``bench``.
    :returns: e.g. ``murano-cidr-simulate-5f0c1e2a9b3d-``.
    """
    return "murano-cidr-%s-%s-" % (tool, uuid.uuid4().hex[:12])


def _delete(conn, prefix):
    deleted = 0
    for table in _TABLES:
        deleted += conn.execute(sa.delete(table).where(
            table.c.scope.startswith(prefix, autoescape=True))).rowcount
    return deleted


def remove_rows(conf, prefix):
    """Delete the rows of every scope whose name starts with ``prefix``.

    Only for the ``db`` driver; call it once no worker of the run is left,
    so that none writes afterwards.

    :param conf: the configuration the run's ``db`` driver was built from.
    :param prefix: the run's :func:`run_prefix`.
    :returns: how many rows were deleted.
    :raises murano_cidr.exceptions.DatabaseUnavailable: if the database
        cannot be reached.
    """
    driver = allocator.get_allocator(conf)
    try:
        return driver.database.write(_delete, prefix)
    finally:
        driver.close()


@contextlib.contextmanager
def removing(prefix, stop=None):
    """Remove the run's rows when the block ends, however it ends.

    :param prefix: the run's :func:`run_prefix`.
    :param stop: called first (no argument), to end the run's workers.
    :returns: a list, to which the block appends the configuration of each
        ``db`` driver once its tables exist.
    :raises murano_cidr.exceptions.BackendUnavailable: naming the prefix,
        if the rows cannot be removed after a block that succeeded; after
        a block that raised, its error goes on and the failure is logged.
    """
    confs = []
    ended = False
    try:
        yield confs
        ended = True
    finally:
        if stop is not None:
            stop()
        for conf in confs:
            try:
                remove_rows(conf, prefix)
            except exceptions.MuranoCidrException as e:
                if ended:
                    raise exceptions.BackendUnavailable(
                        backend="the database", reason="%s; the rows of the "
                        "scopes %s* are left in it" % (e, prefix))
                LOG.error("The rows of the scopes %s* are left in the "
                          "database: %s", prefix, e)
