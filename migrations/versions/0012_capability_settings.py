"""capability settings: the settings capabilities declare, one JSON object per server and
capability; web search's switch and searches per answer and the read-links switch move
there from server_capabilities (downgrade moves them back)

Revision ID: 0012_capability_settings
Revises: 0011_identify
Create Date: 2026-12-06 13:30:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = '0012_capability_settings'
down_revision: str | None = '0011_identify'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(JSONB(), 'postgresql')
SETTINGS = sa.table('capability_settings', sa.column('guild_id', sa.BigInteger()),
                    sa.column('capability', sa.String()), sa.column('settings', JSON))
CAPABILITIES = sa.table('server_capabilities', sa.column('guild_id', sa.BigInteger()),
                        sa.column('web_search_enabled', sa.Boolean()), sa.column('max_searches', sa.Integer()),
                        sa.column('read_links_enabled', sa.Boolean()))
DEFAULTS = {'web_search_enabled': False, 'max_searches': 3, 'read_links_enabled': True}


def upgrade() -> None:
    op.create_table(
        'capability_settings',
        sa.Column('guild_id', sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column('capability', sa.String(length=32), nullable=False),
        sa.Column('settings', JSON, nullable=False),
        sa.ForeignKeyConstraint(['guild_id'], ['servers.guild_id'],
                                name=op.f('fk_capability_settings_guild_id_servers'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('guild_id', 'capability', name=op.f('pk_capability_settings')),
    )
    rows = op.get_bind().execute(sa.select(CAPABILITIES)).all()
    carried = [entry for row in rows for entry in (
        {'guild_id': row.guild_id, 'capability': 'web_search',
         'settings': {'web_search': bool(row.web_search_enabled), 'max_searches': int(row.max_searches)}},
        {'guild_id': row.guild_id, 'capability': 'reading',
         'settings': {'read_links': bool(row.read_links_enabled)}})]
    if carried:
        op.bulk_insert(SETTINGS, carried)
    with op.batch_alter_table('server_capabilities', schema=None) as batch_op:
        batch_op.drop_column('read_links_enabled')
        batch_op.drop_column('max_searches')
        batch_op.drop_column('web_search_enabled')


def _columns(capability: str, stored: dict) -> dict:
    """The old columns one stored object fills (a value of the wrong type: the default)."""
    if capability == 'web_search':
        enabled, count = stored.get('web_search'), stored.get('max_searches')
        return {'web_search_enabled': enabled if isinstance(enabled, bool) else DEFAULTS['web_search_enabled'],
                'max_searches': count if isinstance(count, int) and not isinstance(count, bool)
                and 1 <= count <= 10 else DEFAULTS['max_searches']}
    enabled = stored.get('read_links')
    return {'read_links_enabled': enabled if isinstance(enabled, bool) else DEFAULTS['read_links_enabled']}


def downgrade() -> None:
    with op.batch_alter_table('server_capabilities', schema=None) as batch_op:
        batch_op.add_column(sa.Column('web_search_enabled', sa.Boolean(), server_default=sa.false(),
                                      nullable=False))
        batch_op.add_column(sa.Column('max_searches', sa.Integer(), server_default='3', nullable=False))
        batch_op.add_column(sa.Column('read_links_enabled', sa.Boolean(), server_default=sa.true(),
                                      nullable=False))
    bind = op.get_bind()
    rows = bind.execute(sa.select(SETTINGS).where(SETTINGS.c.capability.in_(['web_search', 'reading']))).all()
    held = {guild_id for (guild_id,) in bind.execute(sa.select(CAPABILITIES.c.guild_id))}
    for guild_id in sorted({row.guild_id for row in rows} - held):
        bind.execute(sa.insert(CAPABILITIES).values(guild_id=guild_id, **DEFAULTS))
    for row in rows:
        bind.execute(sa.update(CAPABILITIES).where(CAPABILITIES.c.guild_id == row.guild_id)
                     .values(**_columns(row.capability, row.settings or {})))
    op.drop_table('capability_settings')
