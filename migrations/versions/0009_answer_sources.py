"""answer sources: the web pages an answer was grounded on, for its Sources button

Revision ID: 0009_answer_sources
Revises: 0008_web_search
Create Date: 2026-12-04 11:00:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0009_answer_sources'
down_revision: str | None = '0008_web_search'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('answers', schema=None) as batch_op:
        batch_op.add_column(sa.Column('sources', sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('answers', schema=None) as batch_op:
        batch_op.drop_column('sources')
