"""mcp tools: the switches a server's managers set on the operator's MCP servers and
their tools (mcp_tool_switches)

Revision ID: 0017_mcp_tools
Revises: 0016_voice
Create Date: 2026-12-06 17:00:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0017_mcp_tools'
down_revision: str | None = '0016_voice'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'mcp_tool_switches',
        sa.Column('guild_id', sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column('mcp_server', sa.String(length=24), nullable=False),
        sa.Column('tool', sa.String(length=128), nullable=False),
        sa.Column('enabled', sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(['guild_id'], ['servers.guild_id'],
                                name=op.f('fk_mcp_tool_switches_guild_id_servers'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('guild_id', 'mcp_server', 'tool', name=op.f('pk_mcp_tool_switches')),
    )


def downgrade() -> None:
    op.drop_table('mcp_tool_switches')
