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

"""A stand-in for Murano's database: its two tables of object models.

The ``environment`` and ``session`` tables have the columns Murano's
migrations give them (``murano/db/migration/alembic_migrations``: 001, 013
and 015; ``description`` is ``LONGTEXT`` on MySQL), and the rows hold JSON
object models shaped as Murano's API and engine write them: an
``Environment`` object whose ``defaultNetworks.environment`` is a
``NeutronNetwork``, each object with its ``"?"`` header.
"""

import datetime
import json
import uuid

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

_TEXT = sa.Text().with_variant(mysql.LONGTEXT(), "mysql")

metadata = sa.MetaData()

environment = sa.Table(
    "environment", metadata,
    sa.Column("created", sa.DateTime(), nullable=False),
    sa.Column("updated", sa.DateTime(), nullable=False),
    sa.Column("id", sa.String(255), primary_key=True),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("tenant_id", sa.String(36), nullable=False),
    sa.Column("version", sa.BigInteger(), nullable=False),
    sa.Column("description", _TEXT, nullable=False),
    sa.Column("description_text", sa.Text(), nullable=True),
    sa.UniqueConstraint("tenant_id", "name"),
    mysql_engine="InnoDB", mysql_charset="utf8")

session = sa.Table(
    "session", metadata,
    sa.Column("created", sa.DateTime(), nullable=False),
    sa.Column("updated", sa.DateTime(), nullable=False),
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("environment_id", sa.String(255),
              sa.ForeignKey("environment.id")),
    sa.Column("user_id", sa.String(64), nullable=False),
    sa.Column("state", sa.String(36), nullable=False),
    sa.Column("description", _TEXT, nullable=False),
    sa.Column("version", sa.BigInteger(), nullable=False),
    mysql_engine="InnoDB", mysql_charset="utf8")


def new_id():
    """Return an id as Murano makes them: 32 hexadecimal digits."""
    return uuid.uuid4().hex


def object_model(env_id, name, network_ids, deployed=True):
    """Return an environment's object model with NeutronNetwork objects.

    :param env_id: the environment's id (its object id, too).
    :param name: the environment's name.
    :param network_ids: the ``id($)`` of each network object; the first is
        the environment's default network, the others applications'.
    :param deployed: whether ``ObjectsCopy`` (the model of the last
        deployment) is there, as after a deployment.
    """
    networks = [{"?": {"id": net_id,
                       "type": "io.murano.resources.NeutronNetwork"},
                 "name": "%s-network-%d" % (name, i),
                 "autoUplink": True, "autogenerateSubnet": True}
                for i, net_id in enumerate(network_ids)]
    objects = {
        "?": {"id": env_id, "type": "io.murano.Environment",
              "metadata": {}},
        "name": name,
        "defaultNetworks": {"environment": networks[0] if networks else None,
                            "flat": None},
        "applications": [
            {"?": {"id": new_id(), "type": "com.example.App"},
             "name": "app-%d" % i, "network": net}
            for i, net in enumerate(networks[1:])],
    }
    model = {"Objects": objects, "Attributes": [],
             "project_id": "project", "user_id": "user"}
    if deployed:
        model["ObjectsCopy"] = json.loads(json.dumps(objects))
    return model


def create(connection):
    """Create the two tables on a connection."""
    metadata.create_all(connection)


def add_environment(connection, env_id, name, network_ids, session_state=None):
    """Insert an environment (and optionally a session) row.

    :param session_state: None for no session; otherwise the state of a
        session holding the same model (``deploying``, ``opened``...).
    """
    now = datetime.datetime.utcnow()
    model = json.dumps(object_model(env_id, name, network_ids))
    connection.execute(environment.insert().values(
        created=now, updated=now, id=env_id, name=name, tenant_id="project",
        version=1, description=model, description_text=""))
    if session_state is not None:
        connection.execute(session.insert().values(
            created=now, updated=now, id=new_id(), environment_id=env_id,
            user_id="user", state=session_state, description=model,
            version=1))


def add_session(connection, env_id, network_ids, state="deploying"):
    """Insert a session whose model holds networks not yet deployed."""
    now = datetime.datetime.utcnow()
    model = json.dumps(object_model(env_id, "s", network_ids,
                                    deployed=False))
    connection.execute(session.insert().values(
        created=now, updated=now, id=new_id(), environment_id=env_id,
        user_id="user", state=state, description=model, version=1))


def remove_environment(connection, env_id):
    """Delete an environment as Murano does once the engine deleted it."""
    connection.execute(session.delete().where(
        session.c.environment_id == env_id))
    connection.execute(environment.delete().where(
        environment.c.id == env_id))


def drop(connection):
    """Drop the two tables."""
    metadata.drop_all(connection)
