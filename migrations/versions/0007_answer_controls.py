"""answer controls: a server's batch window for back-to-back messages, the channels the
bot listens in without a mention (with their gap between answers), and one row per
answer for its message buttons

Revision ID: 0007_answer_controls
Revises: 0006_config_version
Create Date: 2026-12-03 10:00:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0007_answer_controls'
down_revision: str | None = '0006_config_version'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('conversation_settings', schema=None) as batch_op:
        batch_op.add_column(sa.Column('batch_seconds', sa.Float(), nullable=True))
    op.create_table('listen_channels',
    sa.Column('guild_id', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('channel_id', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('gap_seconds', sa.Float(), server_default='5', nullable=False),
    sa.ForeignKeyConstraint(['guild_id'], ['servers.guild_id'],
                            name=op.f('fk_listen_channels_guild_id_servers'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('guild_id', 'channel_id', name=op.f('pk_listen_channels'))
    )
    op.create_table('answers',
    sa.Column('first_message_id', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('channel_id', sa.BigInteger(), nullable=False),
    sa.Column('guild_id', sa.BigInteger(), nullable=True),
    sa.Column('asker_id', sa.BigInteger(), nullable=False),
    sa.Column('question_ids', sa.String(length=400), nullable=False),
    sa.Column('continues_id', sa.BigInteger(), nullable=True),
    sa.Column('finish_reason', sa.String(length=16), nullable=True),
    sa.Column('reasoning', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('CURRENT_TIMESTAMP'),
              nullable=False),
    sa.PrimaryKeyConstraint('first_message_id', name=op.f('pk_answers'))
    )
    op.create_index(op.f('ix_answers_continues_id'), 'answers', ['continues_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_answers_continues_id'), table_name='answers')
    op.drop_table('answers')
    op.drop_table('listen_channels')
    with op.batch_alter_table('conversation_settings', schema=None) as batch_op:
        batch_op.drop_column('batch_seconds')
