"""A member's own provider configuration (BYOK), per server or global (guild_id None).

Every function takes the caller's user id and touches only that member's rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import PersonalConfig
from bot.repo.common import RepositoryError, ensure_server
from bot.repo.keys import KeyHealth, KeyLease, KeyRef, check_secret, health_of
from bot.repo.servers import check_model, check_provider
from bot.vault import Vault, last4, masked_tail


@dataclass(frozen=True)
class PersonalInfo:
    """A member's configuration as it may be shown (the key masked)."""

    id: int
    user_id: int
    guild_id: int | None
    provider: str | None
    model: str | None
    masked_key: str | None
    override_enabled: bool
    server_fallback_allowed: bool
    health: KeyHealth

    @property
    def complete(self) -> bool:
        """Enough to route a turn: key, provider and model."""
        return bool(self.masked_key and self.provider and self.model)


def _info(row: PersonalConfig) -> PersonalInfo:
    return PersonalInfo(
        row.id, row.user_id, row.guild_id, row.provider, row.model,
        masked_tail(row.last4) if row.encrypted_key is not None else None,
        row.override_enabled, row.server_fallback_allowed, health_of(row),
    )


def _scope(user_id: int, guild_id: int | None):
    where = PersonalConfig.guild_id.is_(None) if guild_id is None else PersonalConfig.guild_id == guild_id
    return select(PersonalConfig).where(PersonalConfig.user_id == user_id, where)


async def _row(session: AsyncSession, user_id: int, guild_id: int | None) -> PersonalConfig:
    row = await session.scalar(_scope(user_id, guild_id))
    if row is None:
        if guild_id is not None:
            await ensure_server(session, guild_id)
        row = PersonalConfig(user_id=user_id, guild_id=guild_id, override_enabled=False,
                             server_fallback_allowed=False, successes=0, errors=0)
        session.add(row)
    return row


async def get_personal(session: AsyncSession, user_id: int, guild_id: int | None) -> PersonalInfo | None:
    """Exactly the row of this scope."""
    row = await session.scalar(_scope(user_id, guild_id))
    return _info(row) if row else None


async def effective_personal(session: AsyncSession, user_id: int, guild_id: int | None) -> PersonalInfo | None:
    """The server-scoped row when the member made one here, else their global row."""
    if guild_id is not None:
        row = await get_personal(session, user_id, guild_id)
        if row is not None:
            return row
    return await get_personal(session, user_id, None)


async def set_personal_key(
    session: AsyncSession, vault: Vault, user_id: int, guild_id: int | None, secret: str,
) -> PersonalInfo:
    secret = check_secret(secret)
    row = await _row(session, user_id, guild_id)
    row.encrypted_key, row.last4 = vault.encrypt(secret), last4(secret)
    row.errors, row.last_error_type, row.cooling_down_until = 0, None, None
    await session.flush()
    return _info(row)


async def remove_personal_key(session: AsyncSession, user_id: int, guild_id: int | None) -> bool:
    row = await session.scalar(_scope(user_id, guild_id))
    if row is None or row.encrypted_key is None:
        return False
    row.encrypted_key, row.last4 = None, None
    row.override_enabled = False  # an override without a key could never route a turn
    await session.flush()
    return True


async def set_personal_model(
    session: AsyncSession, user_id: int, guild_id: int | None, provider: str, model: str,
) -> PersonalInfo:
    provider = check_provider(provider)
    if provider == "custom":
        raise RepositoryError("personal_custom_unsupported")
    model = check_model(model)
    row = await _row(session, user_id, guild_id)
    row.provider, row.model = provider, model
    await session.flush()
    return _info(row)


async def set_personal_override(session: AsyncSession, user_id: int, guild_id: int | None, enabled: bool) -> PersonalInfo:
    row = await _row(session, user_id, guild_id)
    if enabled and not (row.encrypted_key is not None and row.provider and row.model):
        raise RepositoryError("personal_incomplete")
    row.override_enabled = enabled
    await session.flush()
    return _info(row)


async def set_personal_server_fallback(
    session: AsyncSession, user_id: int, guild_id: int | None, allowed: bool,
) -> PersonalInfo:
    row = await _row(session, user_id, guild_id)
    row.server_fallback_allowed = allowed
    await session.flush()
    return _info(row)


async def usable_personal_key(
    session: AsyncSession, vault: Vault, info: PersonalInfo, now: datetime,
) -> KeyLease | None:
    """The member's key unless it is cooling down."""
    row = await session.get(PersonalConfig, info.id, populate_existing=True)
    if row is None or row.encrypted_key is None or health_of(row).cooling(now):
        return None
    return KeyLease(KeyRef("personal", row.id), masked_tail(row.last4), vault.decrypt(row.encrypted_key))
