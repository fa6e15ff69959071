"""config versions: a stamp per server (and per member) bumped with every settings
write, and one clock that orders the stamps, so each bot process can ask "what changed
since stamp N" in one query and drop those entries of its configuration cache

Revision ID: 0006_config_version
Revises: 0005_threads
Create Date: 2026-12-02 23:20:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0006_config_version'
down_revision: str | None = '0005_threads'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('config_versions',
    sa.Column('scope', sa.String(length=16), nullable=False),
    sa.Column('scope_id', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('version', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('scope', 'scope_id', name=op.f('pk_config_versions'))
    )
    op.create_index(op.f('ix_config_versions_version'), 'config_versions', ['version'], unique=False)
    clock = op.create_table('config_clock',
    sa.Column('id', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('value', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_config_clock'))
    )
    op.bulk_insert(clock, [{'id': 1, 'value': 0}])


def downgrade() -> None:
    op.drop_table('config_clock')
    op.drop_index(op.f('ix_config_versions_version'), table_name='config_versions')
    op.drop_table('config_versions')
