"""images: the images each member drew per UTC day (the daily image limit's buckets)

Revision ID: 0015_images
Revises: 0014_reminders
Create Date: 2026-12-06 17:00:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0015_images'
down_revision: str | None = '0014_reminders'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'image_days',
        sa.Column('user_id', sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column('day', sa.Date(), nullable=False),
        sa.Column('images', sa.Integer(), server_default='0', nullable=False),
        sa.PrimaryKeyConstraint('user_id', 'day', name=op.f('pk_image_days')),
    )


def downgrade() -> None:
    op.drop_table('image_days')
