"""image routes: a server's own image route (server_image_routes), the daily image bound
of `/limits set` (usage_limits.images_per_day) and the images drawn in each server per day
(server_image_days, for its /usage)

Revision ID: 0018_image_routes
Revises: 0017_mcp_tools
Create Date: 2026-12-06 17:10:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0018_image_routes'
down_revision: str | None = '0017_mcp_tools'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'server_image_routes',
        sa.Column('guild_id', sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column('provider', sa.String(length=32), nullable=False),
        sa.Column('model', sa.String(length=200), nullable=False),
        sa.ForeignKeyConstraint(['guild_id'], ['servers.guild_id'],
                                name=op.f('fk_server_image_routes_guild_id_servers'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('guild_id', name=op.f('pk_server_image_routes')),
    )
    op.create_table(
        'server_image_days',
        sa.Column('guild_id', sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column('day', sa.Date(), nullable=False),
        sa.Column('provider', sa.String(length=32), nullable=False),
        sa.Column('model', sa.String(length=200), nullable=False),
        sa.Column('source', sa.String(length=16), nullable=False),
        sa.Column('images', sa.Integer(), server_default='0', nullable=False),
        sa.ForeignKeyConstraint(['guild_id'], ['servers.guild_id'],
                                name=op.f('fk_server_image_days_guild_id_servers'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('guild_id', 'day', 'provider', 'model', 'source', name=op.f('pk_server_image_days')),
    )
    with op.batch_alter_table('usage_limits', schema=None) as batch_op:
        batch_op.add_column(sa.Column('images_per_day', sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('usage_limits', schema=None) as batch_op:
        batch_op.drop_column('images_per_day')
    op.drop_table('server_image_days')
    op.drop_table('server_image_routes')
