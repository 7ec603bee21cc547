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

"""Initial schema: scopes and allocations.

Revision ID: 5c1b0e7f2a91
Revises:
Create Date: 2026-11-30 03:00:00
"""

from alembic import op
import sqlalchemy as sa

revision = "5c1b0e7f2a91"
down_revision = None
branch_labels = None
depends_on = None

_TABLE_ARGS = {
    "mysql_engine": "InnoDB",
    "mysql_charset": "utf8mb4",
    "mysql_collate": "utf8mb4_bin",
}


def upgrade():
    op.create_table(
        "murano_cidr_scopes",
        sa.Column("scope", sa.String(255), primary_key=True),
        sa.Column("generation", sa.BigInteger, nullable=False),
        **_TABLE_ARGS)
    op.create_table(
        "murano_cidr_allocations",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("owner", sa.String(255), nullable=False),
        sa.Column("scope", sa.String(255), nullable=True),
        sa.Column("ip_version", sa.SmallInteger, nullable=False),
        sa.Column("cidr", sa.String(64), nullable=False),
        sa.Column("range_first", sa.String(32), nullable=False),
        sa.Column("range_last", sa.String(32), nullable=False),
        sa.Column("confirmed", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("owner", name="uniq_murano_cidr_alloc0owner"),
        sa.UniqueConstraint("scope", "ip_version", "range_first",
                            name="uniq_murano_cidr_alloc0scope0first"),
        **_TABLE_ARGS)
