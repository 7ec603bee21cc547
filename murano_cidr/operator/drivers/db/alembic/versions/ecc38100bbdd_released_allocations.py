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

"""Released allocations stay until their subnet has left the router.

A released row keeps its range (``released_at`` set, ``owner`` NULL,
``released_owner`` the former owner), so the owner column becomes
nullable: MySQL/MariaDB, PostgreSQL and SQLite all let a unique column
hold any number of NULLs. Existing rows are live allocations and stay so.

Revision ID: ecc38100bbdd
Revises: 5c1b0e7f2a91
Create Date: 2026-12-01 16:00:00
"""

from alembic import op
import sqlalchemy as sa

revision = "ecc38100bbdd"
down_revision = "5c1b0e7f2a91"
branch_labels = None
depends_on = None


def upgrade():
    # NOTE: batch mode, because SQLite cannot alter a column's nullability
    # in place; on MySQL/MariaDB and PostgreSQL it is a plain ALTER TABLE.
    with op.batch_alter_table("murano_cidr_allocations") as batch:
        batch.alter_column("owner", existing_type=sa.String(255),
                           nullable=True)
        batch.add_column(sa.Column("released_at", sa.DateTime,
                                   nullable=True))
        batch.add_column(sa.Column("released_owner", sa.String(255),
                                   nullable=True))
        batch.create_index("murano_cidr_alloc_released",
                           ["scope", "released_at"])
