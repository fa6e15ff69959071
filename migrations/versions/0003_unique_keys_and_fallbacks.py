"""unique keys and fallbacks: a keyed fingerprint per stored key, so the database refuses
the same key twice in one pool, and one fallback entry per model

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-09 09:00:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0003'
down_revision: str | None = '0002'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Concurrent adds could store one model twice before this constraint: keep the
    # earliest entry (positions may keep a gap; the chain is read in position order).
    op.execute(
        "DELETE FROM model_fallbacks WHERE EXISTS ("
        " SELECT 1 FROM model_fallbacks AS earlier"
        " WHERE earlier.guild_id = model_fallbacks.guild_id"
        " AND earlier.provider = model_fallbacks.provider"
        " AND earlier.model = model_fallbacks.model"
        " AND earlier.position < model_fallbacks.position)"
    )
    with op.batch_alter_table('model_fallbacks', schema=None) as batch_op:
        batch_op.create_unique_constraint('uq_model_fallbacks_target', ['guild_id', 'provider', 'model'])

    # Existing keys cannot be fingerprinted here (that needs the encryption key): they
    # stay NULL, which the constraint allows, until `python -m bot.vault rotate`.
    with op.batch_alter_table('server_api_keys', schema=None) as batch_op:
        batch_op.add_column(sa.Column('key_fingerprint', sa.String(length=64), nullable=True))
        batch_op.create_unique_constraint('uq_server_api_keys_key_fingerprint', ['guild_id', 'provider', 'key_fingerprint'])


def downgrade() -> None:
    with op.batch_alter_table('server_api_keys', schema=None) as batch_op:
        batch_op.drop_constraint('uq_server_api_keys_key_fingerprint', type_='unique')
        batch_op.drop_column('key_fingerprint')

    with op.batch_alter_table('model_fallbacks', schema=None) as batch_op:
        batch_op.drop_constraint('uq_model_fallbacks_target', type_='unique')
