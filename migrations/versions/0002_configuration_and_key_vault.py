"""configuration and key vault: server text route, capabilities, key pools with health,
model fallback chain, personal (BYOK) configurations, environment key health

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02 10:41:40.905252
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0002'
down_revision: str | None = '0001'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('environment_key_health',
    sa.Column('fingerprint', sa.String(length=64), nullable=False),
    sa.Column('successes', sa.Integer(), server_default='0', nullable=False),
    sa.Column('errors', sa.Integer(), server_default='0', nullable=False),
    sa.Column('last_error_type', sa.String(length=64), nullable=True),
    sa.Column('last_error_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('cooling_down_until', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('fingerprint', name=op.f('pk_environment_key_health'))
    )
    op.create_table('model_fallbacks',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('guild_id', sa.BigInteger(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('provider', sa.String(length=32), nullable=False),
    sa.Column('model', sa.String(length=200), nullable=False),
    sa.ForeignKeyConstraint(['guild_id'], ['servers.guild_id'], name=op.f('fk_model_fallbacks_guild_id_servers'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_model_fallbacks')),
    sa.UniqueConstraint('guild_id', 'position', name=op.f('uq_model_fallbacks_guild_id'))
    )
    with op.batch_alter_table('model_fallbacks', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_model_fallbacks_guild_id'), ['guild_id'], unique=False)

    op.create_table('personal_configs',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('user_id', sa.BigInteger(), nullable=False),
    sa.Column('guild_id', sa.BigInteger(), nullable=True),
    sa.Column('provider', sa.String(length=32), nullable=True),
    sa.Column('model', sa.String(length=200), nullable=True),
    sa.Column('encrypted_key', sa.LargeBinary(), nullable=True),
    sa.Column('last4', sa.String(length=4), nullable=True),
    sa.Column('override_enabled', sa.Boolean(), server_default=sa.false(), nullable=False),
    sa.Column('server_fallback_allowed', sa.Boolean(), server_default=sa.false(), nullable=False),
    sa.Column('successes', sa.Integer(), server_default='0', nullable=False),
    sa.Column('errors', sa.Integer(), server_default='0', nullable=False),
    sa.Column('last_error_type', sa.String(length=64), nullable=True),
    sa.Column('last_error_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('cooling_down_until', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['guild_id'], ['servers.guild_id'], name=op.f('fk_personal_configs_guild_id_servers'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_personal_configs')),
    sa.UniqueConstraint('user_id', 'guild_id', name=op.f('uq_personal_configs_user_id'))
    )
    with op.batch_alter_table('personal_configs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_personal_configs_user_id'), ['user_id'], unique=False)
        batch_op.create_index('uq_personal_configs_user_id_global', ['user_id'], unique=True, sqlite_where=sa.text('guild_id IS NULL'), postgresql_where=sa.text('guild_id IS NULL'))

    op.create_table('server_api_keys',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('guild_id', sa.BigInteger(), nullable=False),
    sa.Column('provider', sa.String(length=32), nullable=False),
    sa.Column('label', sa.String(length=64), nullable=False),
    sa.Column('encrypted_key', sa.LargeBinary(), nullable=False),
    sa.Column('last4', sa.String(length=4), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('CURRENT_TIMESTAMP'), nullable=False),
    sa.Column('successes', sa.Integer(), server_default='0', nullable=False),
    sa.Column('errors', sa.Integer(), server_default='0', nullable=False),
    sa.Column('last_error_type', sa.String(length=64), nullable=True),
    sa.Column('last_error_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('cooling_down_until', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['guild_id'], ['servers.guild_id'], name=op.f('fk_server_api_keys_guild_id_servers'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_server_api_keys')),
    sa.UniqueConstraint('guild_id', 'provider', 'label', name=op.f('uq_server_api_keys_guild_id'))
    )
    with op.batch_alter_table('server_api_keys', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_server_api_keys_guild_id'), ['guild_id'], unique=False)

    op.create_table('server_capabilities',
    sa.Column('guild_id', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('verbatim_tool_calling_enabled', sa.Boolean(), server_default=sa.false(), nullable=False),
    sa.ForeignKeyConstraint(['guild_id'], ['servers.guild_id'], name=op.f('fk_server_capabilities_guild_id_servers'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('guild_id', name=op.f('pk_server_capabilities'))
    )
    op.create_table('server_text_configs',
    sa.Column('guild_id', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('provider', sa.String(length=32), nullable=True),
    sa.Column('model', sa.String(length=200), nullable=True),
    sa.Column('base_url', sa.String(length=2048), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.text('CURRENT_TIMESTAMP'), nullable=False),
    sa.ForeignKeyConstraint(['guild_id'], ['servers.guild_id'], name=op.f('fk_server_text_configs_guild_id_servers'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('guild_id', name=op.f('pk_server_text_configs'))
    )


def downgrade() -> None:
    op.drop_table('server_text_configs')
    op.drop_table('server_capabilities')
    with op.batch_alter_table('server_api_keys', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_server_api_keys_guild_id'))

    op.drop_table('server_api_keys')
    with op.batch_alter_table('personal_configs', schema=None) as batch_op:
        batch_op.drop_index('uq_personal_configs_user_id_global', sqlite_where=sa.text('guild_id IS NULL'), postgresql_where=sa.text('guild_id IS NULL'))
        batch_op.drop_index(batch_op.f('ix_personal_configs_user_id'))

    op.drop_table('personal_configs')
    with op.batch_alter_table('model_fallbacks', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_model_fallbacks_guild_id'))

    op.drop_table('model_fallbacks')
    op.drop_table('environment_key_health')
