"""persona and access: the server's and channels' personas, the channel mode, channel
allow/deny rules and member/role access rules

Revision ID: 0004_persona_access
Revises: 0003
Create Date: 2026-12-02 18:00:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0004_persona_access'
down_revision: str | None = '0003'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

AUTO_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def _guild_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(['guild_id'], ['servers.guild_id'],
                                   name=op.f(f'fk_{table}_guild_id_servers'), ondelete='CASCADE')


def upgrade() -> None:
    op.create_table('personas',
    sa.Column('id', AUTO_ID, autoincrement=True, nullable=False),
    sa.Column('guild_id', sa.BigInteger(), nullable=False),
    sa.Column('channel_id', sa.BigInteger(), nullable=True),
    sa.Column('body', sa.Text(), nullable=False),
    _guild_fk('personas'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_personas')),
    sa.UniqueConstraint('guild_id', 'channel_id', name=op.f('uq_personas_guild_id'))
    )
    with op.batch_alter_table('personas', schema=None) as batch_op:
        batch_op.create_index('uq_personas_guild_id_server', ['guild_id'], unique=True,
                              sqlite_where=sa.text('channel_id IS NULL'),
                              postgresql_where=sa.text('channel_id IS NULL'))

    op.create_table('channel_modes',
    sa.Column('guild_id', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('mode', sa.String(length=16), nullable=False),
    _guild_fk('channel_modes'),
    sa.PrimaryKeyConstraint('guild_id', name=op.f('pk_channel_modes'))
    )
    op.create_table('channel_rules',
    sa.Column('id', AUTO_ID, autoincrement=True, nullable=False),
    sa.Column('guild_id', sa.BigInteger(), nullable=False),
    sa.Column('channel_id', sa.BigInteger(), nullable=False),
    sa.Column('rule', sa.String(length=16), nullable=False),
    _guild_fk('channel_rules'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_channel_rules')),
    sa.UniqueConstraint('guild_id', 'channel_id', name=op.f('uq_channel_rules_guild_id'))
    )
    op.create_table('access_rules',
    sa.Column('id', AUTO_ID, autoincrement=True, nullable=False),
    sa.Column('guild_id', sa.BigInteger(), nullable=False),
    sa.Column('target_id', sa.BigInteger(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    _guild_fk('access_rules'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_access_rules')),
    sa.UniqueConstraint('guild_id', 'target_id', 'kind', name=op.f('uq_access_rules_guild_id'))
    )


def downgrade() -> None:
    op.drop_table('access_rules')
    op.drop_table('channel_rules')
    op.drop_table('channel_modes')
    with op.batch_alter_table('personas', schema=None) as batch_op:
        batch_op.drop_index('uq_personas_guild_id_server', sqlite_where=sa.text('channel_id IS NULL'),
                            postgresql_where=sa.text('channel_id IS NULL'))
    op.drop_table('personas')
