"""image prices: what a server pays per image of a model drawn on its own image route
(server_image_prices, set with /model image price, read by its /usage)

Revision ID: 0019_image_prices
Revises: 0018_image_routes
Create Date: 2026-12-06 19:30:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0019_image_prices'
down_revision: str | None = '0018_image_routes'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'server_image_prices',
        sa.Column('guild_id', sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column('model', sa.String(length=200), nullable=False),
        sa.Column('per_image', sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(['guild_id'], ['servers.guild_id'],
                                name=op.f('fk_server_image_prices_guild_id_servers'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('guild_id', 'model', name=op.f('pk_server_image_prices')),
    )


def downgrade() -> None:
    op.drop_table('server_image_prices')
