"""identify turns: when each of Discord's identify buckets last started a session, so
shard processes starting together identify in turn

Revision ID: 0011_identify
Revises: 0010_read_links
Create Date: 2026-12-06 10:00:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0011_identify'
down_revision: str | None = '0010_read_links'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'identify_turns',
        sa.Column('bucket', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('identified_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('bucket', name=op.f('pk_identify_turns')),
    )


def downgrade() -> None:
    op.drop_table('identify_turns')
