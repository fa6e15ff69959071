"""web search: the server's switch and searches per answer (with its other capability
switches), searches per usage day row, a price per thousand searches, a per-member
daily search limit, and the day buckets that count searches against it

Revision ID: 0008_web_search
Revises: 0007_answer_controls
Create Date: 2026-12-04 10:00:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0008_web_search'
down_revision: str | None = '0007_answer_controls'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('server_capabilities', schema=None) as batch_op:
        batch_op.add_column(sa.Column('web_search_enabled', sa.Boolean(), server_default=sa.false(),
                                      nullable=False))
        batch_op.add_column(sa.Column('max_searches', sa.Integer(), server_default='3', nullable=False))
    with op.batch_alter_table('usage_days', schema=None) as batch_op:
        batch_op.add_column(sa.Column('searches', sa.BigInteger(), server_default='0', nullable=False))
    with op.batch_alter_table('model_prices', schema=None) as batch_op:
        batch_op.add_column(sa.Column('per_1000_searches', sa.Float(), nullable=True))
    with op.batch_alter_table('usage_limits', schema=None) as batch_op:
        batch_op.add_column(sa.Column('searches_per_day', sa.Integer(), nullable=True))
    op.create_table('search_days',
    sa.Column('guild_id', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('user_id', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('day', sa.Date(), nullable=False),
    sa.Column('searches', sa.Integer(), server_default='0', nullable=False),
    sa.PrimaryKeyConstraint('guild_id', 'user_id', 'day', name=op.f('pk_search_days'))
    )


def downgrade() -> None:
    op.drop_table('search_days')
    with op.batch_alter_table('usage_limits', schema=None) as batch_op:
        batch_op.drop_column('searches_per_day')
    with op.batch_alter_table('model_prices', schema=None) as batch_op:
        batch_op.drop_column('per_1000_searches')
    with op.batch_alter_table('usage_days', schema=None) as batch_op:
        batch_op.drop_column('searches')
    with op.batch_alter_table('server_capabilities', schema=None) as batch_op:
        batch_op.drop_column('max_searches')
        batch_op.drop_column('web_search_enabled')
