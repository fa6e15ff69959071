"""threads: a server's "answer in threads" switch, next to its history depth

Revision ID: 0005_threads
Revises: 0004_conversation
Create Date: 2026-12-02 23:00:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0005_threads'
down_revision: str | None = '0004_conversation'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('conversation_settings', schema=None) as batch_op:
        batch_op.add_column(sa.Column('threads_enabled', sa.Boolean(), server_default=sa.false(),
                                      nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('conversation_settings', schema=None) as batch_op:
        batch_op.drop_column('threads_enabled')
