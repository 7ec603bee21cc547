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

"""The ``db`` driver's check for ``murano-cidr-status upgrade check``."""

from oslo_upgradecheck import upgradecheck

from murano_cidr.engine.drivers.db import connection
from murano_cidr import exceptions
from murano_cidr import messages
from murano_cidr.operator.drivers.db import migration
from murano_cidr.operator.drivers.db import revisions

SUCCESS = upgradecheck.Code.SUCCESS
WARNING = upgradecheck.Code.WARNING
FAILURE = upgradecheck.Code.FAILURE

_SYNC = ("run 'murano-cidr-manage --config-file <file> db sync' before "
         "restarting the services: until then every deployment that needs "
         "a CIDR fails with DatabaseNotSynced")


def check_database(conf):
    """The allocation tables exist and are at the head revision.

    :param conf: the configuration, its files read.
    :returns: an :class:`oslo_upgradecheck.upgradecheck.Result`.
    """
    try:
        url = messages.safe_url(connection.connection_url(conf))
        current, tables = migration.current_schema(conf)
    except (exceptions.BackendUnavailable, exceptions.InvalidConfig) as e:
        return upgradecheck.Result(FAILURE, "%s." % messages.clause(e))
    head = revisions.head_revision()
    state = revisions.schema_state(current, tables)
    if state is revisions.SchemaState.UNRECORDED:
        # NOTE: the words of db sync and of the driver, which refuse it.
        return upgradecheck.Result(
            FAILURE, "%s." % messages.clause(revisions.unrecorded(url,
                                                                  tables)))
    if state is revisions.SchemaState.MISSING:
        return upgradecheck.Result(
            FAILURE, "The allocation database %s has no murano-cidr "
            "tables; %s." % (url, _SYNC))
    if state is revisions.SchemaState.CURRENT:
        return upgradecheck.Result(
            SUCCESS, "The allocation database %s is at the head revision "
            "%s." % (url, head))
    if state is revisions.SchemaState.OLDER:
        return upgradecheck.Result(
            FAILURE, "The allocation database %s is at revision %s, this "
            "code needs %s; %s." % (url, current, head, _SYNC))
    return upgradecheck.Result(
        WARNING, "The allocation database %s is at revision %s, which this "
        "code does not know (its head is %s): its schema is newer. Upgrade "
        "murano-cidr on this host." % (url, current, head))
