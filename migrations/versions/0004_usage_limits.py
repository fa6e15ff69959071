"""usage and limits: tokens per day, messages per hour, model prices, server limits and
generation settings

Revision ID: 0004_usage_limits
Revises: 0003
Create Date: 2026-12-02 18:05:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0004_usage_limits'
down_revision: str | None = '0004_persona_access'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

AUTO_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')
USAGE_KEY = ['user_id', 'provider', 'model', 'credential_source', 'day', 'estimated']


def _server_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(['guild_id'], ['servers.guild_id'], name=op.f(f'fk_{table}_guild_id_servers'),
                                   ondelete='CASCADE')


def upgrade() -> None:
    op.create_table('usage_days',
    sa.Column('id', AUTO_ID, autoincrement=True, nullable=False),
    sa.Column('guild_id', sa.BigInteger(), nullable=True),
    sa.Column('user_id', sa.BigInteger(), nullable=False),
    sa.Column('provider', sa.String(length=32), nullable=False),
    sa.Column('model', sa.String(length=200), nullable=False),
    sa.Column('credential_source', sa.String(length=16), nullable=False),
    sa.Column('day', sa.Date(), nullable=False),
    sa.Column('estimated', sa.Boolean(), server_default=sa.false(), nullable=False),
    sa.Column('input_tokens', sa.BigInteger(), server_default='0', nullable=False),
    sa.Column('output_tokens', sa.BigInteger(), server_default='0', nullable=False),
    sa.Column('reasoning_tokens', sa.BigInteger(), server_default='0', nullable=False),
    sa.Column('cached_input_tokens', sa.BigInteger(), server_default='0', nullable=False),
    sa.Column('messages', sa.Integer(), server_default='0', nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_usage_days')),
    sa.UniqueConstraint('guild_id', *USAGE_KEY, name='uq_usage_days_key'),
    )
    op.create_index('uq_usage_days_key_dm', 'usage_days', USAGE_KEY, unique=True,
                    sqlite_where=sa.text('guild_id IS NULL'), postgresql_where=sa.text('guild_id IS NULL'))
    op.create_index('ix_usage_days_guild_day', 'usage_days', ['guild_id', 'day'], unique=False)
    op.create_index('ix_usage_days_user_day', 'usage_days', ['user_id', 'day'], unique=False)

    op.create_table('message_hours',
    sa.Column('id', AUTO_ID, autoincrement=True, nullable=False),
    sa.Column('guild_id', sa.BigInteger(), nullable=False),
    sa.Column('user_id', sa.BigInteger(), nullable=False),
    sa.Column('hour', sa.DateTime(timezone=True), nullable=False),
    sa.Column('messages', sa.Integer(), server_default='0', nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_message_hours')),
    sa.UniqueConstraint('guild_id', 'user_id', 'hour', name='uq_message_hours_key'),
    )
    op.create_table('model_prices',
    sa.Column('id', AUTO_ID, autoincrement=True, nullable=False),
    sa.Column('guild_id', sa.BigInteger(), nullable=False),
    sa.Column('provider', sa.String(length=32), nullable=True),
    sa.Column('model', sa.String(length=200), nullable=False),
    sa.Column('input_per_million', sa.Float(), nullable=False),
    sa.Column('output_per_million', sa.Float(), nullable=False),
    _server_fk('model_prices'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_model_prices')),
    sa.UniqueConstraint('guild_id', 'model', name='uq_model_prices_model'),
    )
    op.create_table('usage_limits',
    sa.Column('guild_id', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('messages_per_hour', sa.Integer(), nullable=True),
    sa.Column('tokens_per_day', sa.BigInteger(), nullable=True),
    sa.Column('server_tokens_per_day', sa.BigInteger(), nullable=True),
    _server_fk('usage_limits'),
    sa.PrimaryKeyConstraint('guild_id', name=op.f('pk_usage_limits')),
    )
    op.create_table('generation_params',
    sa.Column('guild_id', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('temperature', sa.Float(), nullable=True),
    sa.Column('max_output_tokens', sa.Integer(), nullable=True),
    sa.Column('reasoning', sa.String(length=8), nullable=True),
    _server_fk('generation_params'),
    sa.PrimaryKeyConstraint('guild_id', name=op.f('pk_generation_params')),
    )


def downgrade() -> None:
    op.drop_table('generation_params')
    op.drop_table('usage_limits')
    op.drop_table('model_prices')
    op.drop_table('message_hours')
    op.drop_index('ix_usage_days_user_day', table_name='usage_days')
    op.drop_index('ix_usage_days_guild_day', table_name='usage_days')
    op.drop_index('uq_usage_days_key_dm', table_name='usage_days')
    op.drop_table('usage_days')
