"""reminders: members' reminders (due time, channel, delivery state and the claim a
delivering process holds) and each member's time zone

Revision ID: 0014_reminders
Revises: 0013_memory
Create Date: 2026-12-06 16:30:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0014_reminders'
down_revision: str | None = '0013_memory'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

AUTO_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table(
        'reminders',
        sa.Column('id', AUTO_ID, autoincrement=True, nullable=False),
        sa.Column('user_id', sa.BigInteger(), nullable=False),
        sa.Column('guild_id', sa.BigInteger(), nullable=True),
        sa.Column('channel_id', sa.BigInteger(), nullable=False),
        sa.Column('text', sa.Text(), nullable=False),
        sa.Column('locale', sa.String(length=16), nullable=True),
        sa.Column('due_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('state', sa.String(length=16), server_default='pending', nullable=False),
        sa.Column('attempts', sa.Integer(), server_default='0', nullable=False),
        sa.Column('claimed_by', sa.String(length=64), nullable=True),
        sa.Column('claim_until', sa.DateTime(timezone=True), nullable=True),
        sa.Column('delivered_at', sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_reminders')),
    )
    op.create_index('ix_reminders_state_due_at', 'reminders', ['state', 'due_at'], unique=False)
    op.create_index(op.f('ix_reminders_user_id'), 'reminders', ['user_id'], unique=False)
    op.create_table(
        'member_time_zones',
        sa.Column('user_id', sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column('zone', sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint('user_id', name=op.f('pk_member_time_zones')),
    )


def downgrade() -> None:
    op.drop_table('member_time_zones')
    op.drop_index(op.f('ix_reminders_user_id'), table_name='reminders')
    op.drop_index('ix_reminders_state_due_at', table_name='reminders')
    op.drop_table('reminders')
