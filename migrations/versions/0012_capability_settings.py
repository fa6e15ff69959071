"""capability settings: the settings capabilities declare, one JSON object per server and
capability; web search's switch and searches per answer and the read-links switch move
there from server_capabilities, the history depth and thread switch (the conversation's,
every answer's own settings) and the batch window (listening's) from conversation_settings
(dropped); downgrade moves them back

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
CONVERSATION = sa.table('conversation_settings', sa.column('guild_id', sa.BigInteger()),
                        sa.column('history_messages', sa.Integer()), sa.column('threads_enabled', sa.Boolean()),
                        sa.column('batch_seconds', sa.Float()))
# The old columns' defaults and bounds (a stored value outside them goes back as the default).
CAPABILITY_DEFAULTS = {'web_search_enabled': False, 'max_searches': 3, 'read_links_enabled': True}
HISTORY_DEFAULT, HISTORY_MAX, BATCH_MAX = 10, 50, 10.0


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
    bind = op.get_bind()
    carried = [entry for row in bind.execute(sa.select(CAPABILITIES)).all() for entry in (
        {'guild_id': row.guild_id, 'capability': 'web_search',
         'settings': {'web_search': bool(row.web_search_enabled), 'max_searches': int(row.max_searches)}},
        {'guild_id': row.guild_id, 'capability': 'reading',
         'settings': {'read_links': bool(row.read_links_enabled)}})]
    for row in bind.execute(sa.select(CONVERSATION)).all():
        carried.append({'guild_id': row.guild_id, 'capability': 'conversation',
                        'settings': {'history': int(row.history_messages), 'threads': bool(row.threads_enabled)}})
        if row.batch_seconds is not None:  # NULL: the default window, nothing to carry
            carried.append({'guild_id': row.guild_id, 'capability': 'listening',
                            'settings': {'batch_seconds': float(row.batch_seconds)}})
    if carried:
        op.bulk_insert(SETTINGS, carried)
    with op.batch_alter_table('server_capabilities', schema=None) as batch_op:
        batch_op.drop_column('read_links_enabled')
        batch_op.drop_column('max_searches')
        batch_op.drop_column('web_search_enabled')
    op.drop_table('conversation_settings')


def _number(value: object, low: float, high: float) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and low <= value <= high


def _capability_columns(capability: str, stored: dict) -> dict:
    """The server_capabilities columns one stored object fills (a value it cannot hold: the default)."""
    if capability == 'web_search':
        enabled, count = stored.get('web_search'), stored.get('max_searches')
        return {'web_search_enabled': enabled if isinstance(enabled, bool) else False,
                'max_searches': count if isinstance(count, int) and _number(count, 1, 10) else 3}
    enabled = stored.get('read_links')
    return {'read_links_enabled': enabled if isinstance(enabled, bool) else True}


def _conversation_columns(stored: dict) -> dict:
    history, threads, batch = stored.get('history'), stored.get('threads'), stored.get('batch_seconds')
    return {'history_messages': history if isinstance(history, int) and _number(history, 0, HISTORY_MAX)
            else HISTORY_DEFAULT,
            'threads_enabled': threads if isinstance(threads, bool) else False,
            'batch_seconds': float(batch) if _number(batch, 0, BATCH_MAX) else None}


def downgrade() -> None:
    with op.batch_alter_table('server_capabilities', schema=None) as batch_op:
        batch_op.add_column(sa.Column('web_search_enabled', sa.Boolean(), server_default=sa.false(),
                                      nullable=False))
        batch_op.add_column(sa.Column('max_searches', sa.Integer(), server_default='3', nullable=False))
        batch_op.add_column(sa.Column('read_links_enabled', sa.Boolean(), server_default=sa.true(),
                                      nullable=False))
    op.create_table(
        'conversation_settings',
        sa.Column('guild_id', sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column('history_messages', sa.Integer(), nullable=False),
        sa.Column('threads_enabled', sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column('batch_seconds', sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(['guild_id'], ['servers.guild_id'],
                                name=op.f('fk_conversation_settings_guild_id_servers'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('guild_id', name=op.f('pk_conversation_settings')),
    )
    bind = op.get_bind()
    rows = bind.execute(sa.select(SETTINGS)).all()
    held = {guild_id for (guild_id,) in bind.execute(sa.select(CAPABILITIES.c.guild_id))}
    switches = [row for row in rows if row.capability in ('web_search', 'reading')]
    for guild_id in sorted({row.guild_id for row in switches} - held):
        bind.execute(sa.insert(CAPABILITIES).values(guild_id=guild_id, **CAPABILITY_DEFAULTS))
    for row in switches:
        bind.execute(sa.update(CAPABILITIES).where(CAPABILITIES.c.guild_id == row.guild_id)
                     .values(**_capability_columns(row.capability, row.settings or {})))
    conversations: dict[int, dict] = {}
    for row in rows:
        if row.capability in ('conversation', 'listening'):
            conversations.setdefault(row.guild_id, {}).update(row.settings or {})
    for guild_id, stored in sorted(conversations.items()):
        bind.execute(sa.insert(CONVERSATION).values(guild_id=guild_id, **_conversation_columns(stored)))
    op.drop_table('capability_settings')
