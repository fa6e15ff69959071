"""A member's own provider configuration (BYOK), per server or global (guild_id None).

Every function takes the caller's user id and touches only that member's rows. A row is
created with INSERT ... ON CONFLICT DO NOTHING, so two processes handling the member's
first commands at the same moment share one row instead of one crashing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import MemoryOptIn, PersonalConfig
from bot.repo.common import RepositoryError, conflicts_as, ensure_server, insert_for
from bot.repo.keys import KeyHealth, KeyLease, KeyRef, check_secret, health_of
from bot.repo.servers import check_model, check_provider
from bot.repo.versions import config_write
from bot.vault import Vault, last4, mask, masked_tail
from providers.identity import Provider

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PersonalInfo:
    """A member's configuration as it may be shown (the key masked). `undecryptable` is
    set when the read was given the vault and none of its keys opens the stored key."""

    id: int
    user_id: int
    guild_id: int | None
    provider: str | None
    model: str | None
    masked_key: str | None
    override_enabled: bool
    server_fallback_allowed: bool
    health: KeyHealth
    undecryptable: bool = False

    @property
    def complete(self) -> bool:
        """Enough to route a turn: key, provider and model."""
        return bool(self.masked_key and self.provider and self.model)


def _info(row: PersonalConfig, vault: Vault | None = None) -> PersonalInfo:
    masked, undecryptable = None, False
    if row.encrypted_key is not None:
        secret = vault.try_decrypt(row.encrypted_key) if vault is not None else None
        masked = mask(secret) if secret is not None else masked_tail(row.last4)
        undecryptable = vault is not None and secret is None
    return PersonalInfo(
        row.id, row.user_id, row.guild_id, row.provider, row.model, masked,
        row.override_enabled, row.server_fallback_allowed, health_of(row), undecryptable,
    )


def _scope(user_id: int, guild_id: int | None):
    where = PersonalConfig.guild_id.is_(None) if guild_id is None else PersonalConfig.guild_id == guild_id
    return select(PersonalConfig).where(PersonalConfig.user_id == user_id, where)


async def _row(session: AsyncSession, user_id: int, guild_id: int | None) -> PersonalConfig:
    row = await session.scalar(_scope(user_id, guild_id))
    if row is None:
        if guild_id is not None:
            await ensure_server(session, guild_id)
        # No conflict target: the (user, guild) constraint and the one-global-row index
        # (a partial index) must both count as "already there".
        await session.execute(insert_for(session, PersonalConfig).values(
            user_id=user_id, guild_id=guild_id, override_enabled=False,
            server_fallback_allowed=False, successes=0, errors=0,
        ).on_conflict_do_nothing())
        row = await session.scalar(_scope(user_id, guild_id).execution_options(populate_existing=True))
    assert row is not None  # inserted just now, or by the process that won the race
    return row


async def get_personal(
    session: AsyncSession, user_id: int, guild_id: int | None, *, vault: Vault | None = None,
) -> PersonalInfo | None:
    """Exactly the row of this scope (with `vault`, also whether its key still decrypts)."""
    row = await session.scalar(_scope(user_id, guild_id))
    return _info(row, vault) if row else None


async def effective_personal(
    session: AsyncSession, user_id: int, guild_id: int | None, *, vault: Vault | None = None,
) -> PersonalInfo | None:
    """The server-scoped row when the member made one here, else their global row."""
    if guild_id is not None:
        row = await get_personal(session, user_id, guild_id, vault=vault)
        if row is not None:
            return row
    return await get_personal(session, user_id, None, vault=vault)


@conflicts_as("conflict")
@config_write("member", "user_id")
async def set_personal_key(
    session: AsyncSession, vault: Vault, user_id: int, guild_id: int | None, secret: str,
) -> PersonalInfo:
    secret = check_secret(secret)
    row = await _row(session, user_id, guild_id)
    row.encrypted_key, row.last4 = vault.encrypt(secret), last4(secret)
    row.errors, row.last_error_type, row.cooling_down_until = 0, None, None
    await session.flush()
    return _info(row, vault)


@config_write("member", "user_id")
async def remove_personal_key(session: AsyncSession, user_id: int, guild_id: int | None) -> bool:
    row = await session.scalar(_scope(user_id, guild_id))
    if row is None or row.encrypted_key is None:
        return False
    row.encrypted_key, row.last4 = None, None
    row.override_enabled = False  # an override without a key could never route a turn
    await session.flush()
    return True


@conflicts_as("conflict")
@config_write("member", "user_id")
async def set_personal_model(
    session: AsyncSession, user_id: int, guild_id: int | None, provider: str, model: str,
) -> PersonalInfo:
    provider = check_provider(provider)
    if provider is Provider.CUSTOM:
        raise RepositoryError("personal_custom_unsupported")
    model = check_model(model)
    row = await _row(session, user_id, guild_id)
    row.provider, row.model = provider.value, model
    await session.flush()
    return _info(row)


@conflicts_as("conflict")
@config_write("member", "user_id")
async def set_personal_override(session: AsyncSession, user_id: int, guild_id: int | None, enabled: bool) -> PersonalInfo:
    row = await _row(session, user_id, guild_id)
    if enabled and not (row.encrypted_key is not None and row.provider and row.model):
        raise RepositoryError("personal_incomplete")
    row.override_enabled = enabled
    await session.flush()
    return _info(row)


@conflicts_as("conflict")
@config_write("member", "user_id")
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
    """The member's key unless it is cooling down or cannot be decrypted."""
    row = await session.get(PersonalConfig, info.id, populate_existing=True)
    if row is None or row.encrypted_key is None or health_of(row).cooling(now):
        return None
    secret = vault.try_decrypt(row.encrypted_key)
    if secret is None:
        log.warning("personal key of member %s (%s) cannot be decrypted with the configured "
                    "BOT_ENCRYPTION_KEY; skipped", row.user_id, masked_tail(row.last4))
        return None
    return KeyLease(KeyRef("personal", row.id), mask(secret), secret)


@dataclass(frozen=True)
class PersonalEntry:
    """A member's effective configuration as the configuration cache keeps it: the info,
    and the key still encrypted (decrypted only when leased)."""

    info: PersonalInfo | None
    encrypted: bytes | None = field(default=None, repr=False)


async def effective_personal_entry(session: AsyncSession, user_id: int, guild_id: int | None) -> PersonalEntry:
    """`effective_personal` with the encrypted key, in one read per scope."""
    row = await session.scalar(_scope(user_id, guild_id)) if guild_id is not None else None
    if row is None:
        row = await session.scalar(_scope(user_id, None))
    return PersonalEntry(_info(row), row.encrypted_key) if row is not None else PersonalEntry(None)


async def members_with_settings(session: AsyncSession) -> set[int]:
    """Every member with a row of their own (a key, a model or a switch, in any scope, or
    memory turned on: `bot.capabilities.memory`)."""
    personal = select(PersonalConfig.user_id)
    return set((await session.scalars(personal.union(select(MemoryOptIn.user_id)))).all())


def personal_lease(vault: Vault, entry: PersonalEntry, now: datetime) -> KeyLease | None:
    """The member's key unless it rests or cannot be decrypted."""
    info = entry.info
    if info is None or entry.encrypted is None or info.health.cooling(now):
        return None
    secret = vault.try_decrypt(entry.encrypted)
    if secret is None:
        log.warning("personal key of member %s cannot be decrypted with the configured BOT_ENCRYPTION_KEY; "
                    "skipped", info.user_id)
        return None
    return KeyLease(KeyRef("personal", info.id), mask(secret), secret)
