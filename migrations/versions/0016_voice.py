"""voice: the voice messages the bot transcribed (their words and seconds)

Revision ID: 0016_voice
Revises: 0015_images
Create Date: 2026-12-06 17:00:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0016_voice'
down_revision: str | None = '0015_images'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'voice_transcripts',
        sa.Column('attachment_id', sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column('message_id', sa.BigInteger(), nullable=False),
        sa.Column('user_id', sa.BigInteger(), nullable=False),
        sa.Column('guild_id', sa.BigInteger(), nullable=True),
        sa.Column('words', sa.Text(), nullable=False),
        sa.Column('seconds', sa.Float(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('attachment_id', name=op.f('pk_voice_transcripts')),
    )
    op.create_index(op.f('ix_voice_transcripts_user_id'), 'voice_transcripts', ['user_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_voice_transcripts_user_id'), table_name='voice_transcripts')
    op.drop_table('voice_transcripts')
