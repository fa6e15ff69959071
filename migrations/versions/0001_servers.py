"""servers

Revision ID: 0001
Revises:
Create Date: 2026-12-02 10:34:52.282051
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0001'
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('servers',
    sa.Column('guild_id', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('locale', sa.String(length=16), nullable=True),
    sa.Column('thought_log_channel_id', sa.BigInteger(), nullable=True),
    sa.Column('member_keys_required', sa.Boolean(), server_default=sa.false(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('CURRENT_TIMESTAMP'), nullable=False),
    sa.PrimaryKeyConstraint('guild_id', name=op.f('pk_servers'))
    )


def downgrade() -> None:
    op.drop_table('servers')
