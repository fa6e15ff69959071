"""operator images: of each member's images per day, those drawn on the operator's route
(image_days.operator_images), so /personal usage prices only them at IMAGE_PRICE

Revision ID: 0020_operator_images
Revises: 0019_image_prices
Create Date: 2026-12-06 23:10:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0020_operator_images'
down_revision: str | None = '0019_image_prices'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('image_days') as batch:
        batch.add_column(sa.Column('operator_images', sa.Integer(), server_default='0', nullable=False))
    # Before this column /personal usage priced every image at IMAGE_PRICE: days counted
    # then keep that price, so a member's figures do not change on the upgrade.
    op.execute('UPDATE image_days SET operator_images = images')


def downgrade() -> None:
    with op.batch_alter_table('image_days') as batch:
        batch.drop_column('operator_images')
