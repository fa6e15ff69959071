"""read links: the server's switch for reading the links in its members' questions (with its
other capability switches; on for every server, as before it existed)

Revision ID: 0010_read_links
Revises: 0009_answer_sources
Create Date: 2026-12-05 10:00:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0010_read_links'
down_revision: str | None = '0009_answer_sources'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('server_capabilities', schema=None) as batch_op:
        batch_op.add_column(sa.Column('read_links_enabled', sa.Boolean(), server_default=sa.true(),
                                      nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('server_capabilities', schema=None) as batch_op:
        batch_op.drop_column('read_links_enabled')
