"""conversation: the messages of each answer (a reply to any part continues the whole
answer) and a server's history depth

Revision ID: 0004_conversation
Revises: 0003
Create Date: 2026-12-02 18:05:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0004_conversation'
down_revision: str | None = '0004_usage_limits'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('answer_parts',
    sa.Column('message_id', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('first_message_id', sa.BigInteger(), nullable=False),
    sa.Column('question_id', sa.BigInteger(), nullable=False),
    sa.Column('channel_id', sa.BigInteger(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('CURRENT_TIMESTAMP'),
              nullable=False),
    sa.PrimaryKeyConstraint('message_id', name=op.f('pk_answer_parts'))
    )
    op.create_index(op.f('ix_answer_parts_first_message_id'), 'answer_parts', ['first_message_id'], unique=False)
    op.create_table('conversation_settings',
    sa.Column('guild_id', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('history_messages', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['guild_id'], ['servers.guild_id'],
                            name=op.f('fk_conversation_settings_guild_id_servers'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('guild_id', name=op.f('pk_conversation_settings'))
    )


def downgrade() -> None:
    op.drop_table('conversation_settings')
    op.drop_index(op.f('ix_answer_parts_first_message_id'), table_name='answer_parts')
    op.drop_table('answer_parts')
