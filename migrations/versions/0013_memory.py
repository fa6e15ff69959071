"""memory: a member's memory switch (memory_opt_ins), the facts a member asked the bot to
keep (memories, with the server each was saved in) and the facts a server's managers set
(server_facts)

Revision ID: 0013_memory
Revises: 0012_capability_settings
Create Date: 2026-12-06 16:10:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0013_memory'
down_revision: str | None = '0012_capability_settings'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

AutoId = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table(
        'memory_opt_ins',
        sa.Column('user_id', sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column('enabled', sa.Boolean(), nullable=False),
        sa.Column('changed_at', sa.DateTime(timezone=True), server_default=sa.text('CURRENT_TIMESTAMP'),
                  nullable=False),
        sa.PrimaryKeyConstraint('user_id', name=op.f('pk_memory_opt_ins')),
    )
    op.create_table(
        'memories',
        sa.Column('id', AutoId, autoincrement=True, nullable=False),
        sa.Column('user_id', sa.BigInteger(), nullable=False),
        sa.Column('guild_id', sa.BigInteger(), nullable=True),
        sa.Column('fact', sa.String(length=500), nullable=False),
        sa.Column('saved_at', sa.DateTime(timezone=True), server_default=sa.text('CURRENT_TIMESTAMP'),
                  nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_memories')),
    )
    op.create_index('ix_memories_user_id_id', 'memories', ['user_id', 'id'], unique=False)
    op.create_table(
        'server_facts',
        sa.Column('id', AutoId, autoincrement=True, nullable=False),
        sa.Column('guild_id', sa.BigInteger(), nullable=False),
        sa.Column('fact', sa.String(length=500), nullable=False),
        sa.Column('added_by', sa.BigInteger(), nullable=False),
        sa.Column('added_at', sa.DateTime(timezone=True), server_default=sa.text('CURRENT_TIMESTAMP'),
                  nullable=False),
        sa.ForeignKeyConstraint(['guild_id'], ['servers.guild_id'],
                                name=op.f('fk_server_facts_guild_id_servers'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_server_facts')),
    )
    op.create_index(op.f('ix_server_facts_guild_id'), 'server_facts', ['guild_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_server_facts_guild_id'), table_name='server_facts')
    op.drop_table('server_facts')
    op.drop_index('ix_memories_user_id_id', table_name='memories')
    op.drop_table('memories')
    op.drop_table('memory_opt_ins')
