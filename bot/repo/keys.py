"""Server key pools and key health.

Health (successes, errors, last error, cool-down) is written with single UPDATE
statements that increment in SQL, so shard processes sharing one database never lose
each other's counts, and a cool-down set by one process is seen by all.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import EnvironmentKeyHealth, PersonalConfig, ServerApiKey
from bot.repo.common import RepositoryError, as_utc, ensure_server, insert_for
from bot.repo.servers import check_provider
from bot.vault import Vault, fingerprint, last4, masked_tail

MAX_LABEL_LENGTH = 64
MAX_KEY_LENGTH = 1024
MAX_POOL_SIZE = 25

KeyKind = Literal["server", "personal", "environment"]


@dataclass(frozen=True)
class KeyRef:
    """Which stored key a health update is about (never the key itself)."""

    kind: KeyKind
    ident: int | str


@dataclass(frozen=True)
class KeyHealth:
    successes: int
    errors: int
    last_error_type: str | None
    cooling_down_until: datetime | None

    def cooling(self, now: datetime) -> bool:
        return self.cooling_down_until is not None and self.cooling_down_until > now


@dataclass(frozen=True)
class KeyInfo:
    """A stored key as it may be shown: masked, with its health."""

    id: int
    provider: str
    label: str
    masked: str
    health: KeyHealth


@dataclass(frozen=True)
class KeyLease:
    """A decrypted key handed to the generation turn; its repr never shows the secret."""

    ref: KeyRef
    masked: str
    secret: str = field(repr=False)


def check_secret(secret: str) -> str:
    value = secret.strip()
    if not value:
        raise RepositoryError("empty_key")
    if len(value) > MAX_KEY_LENGTH or any(c.isspace() for c in value):
        raise RepositoryError("bad_key")
    return value


def health_of(row) -> KeyHealth:
    return KeyHealth(row.successes, row.errors, row.last_error_type, as_utc(row.cooling_down_until))


def _info(row: ServerApiKey) -> KeyInfo:
    return KeyInfo(row.id, row.provider, row.label, masked_tail(row.last4), health_of(row))


async def add_server_key(
    session: AsyncSession, vault: Vault, guild_id: int, provider: str, secret: str,
    label: str | None = None,
) -> KeyInfo:
    """Encrypt and store a key in the pool; the same key twice is refused."""
    provider = check_provider(provider)
    secret = check_secret(secret)
    await ensure_server(session, guild_id)
    pool = list(await session.scalars(
        select(ServerApiKey).where(ServerApiKey.guild_id == guild_id, ServerApiKey.provider == provider)
    ))
    if len(pool) >= MAX_POOL_SIZE:
        raise RepositoryError("pool_full", limit=MAX_POOL_SIZE)
    if any(hmac.compare_digest(vault.decrypt(row.encrypted_key), secret) for row in pool):
        raise RepositoryError("key_duplicate")
    taken = {row.label for row in pool}
    label = (label or "").strip()[:MAX_LABEL_LENGTH]
    if not label:
        label = next(f"key-{n}" for n in range(1, len(pool) + 2) if f"key-{n}" not in taken)
    elif label in taken:
        raise RepositoryError("label_taken", label=label)
    row = ServerApiKey(guild_id=guild_id, provider=provider, label=label,
                       encrypted_key=vault.encrypt(secret), last4=last4(secret),
                       successes=0, errors=0)
    session.add(row)
    await session.flush()
    return _info(row)


async def list_server_keys(session: AsyncSession, guild_id: int, provider: str | None = None) -> list[KeyInfo]:
    stmt = select(ServerApiKey).where(ServerApiKey.guild_id == guild_id)
    if provider is not None:
        stmt = stmt.where(ServerApiKey.provider == provider)
    rows = await session.scalars(stmt.order_by(ServerApiKey.provider, ServerApiKey.id))
    return [_info(row) for row in rows]


async def remove_server_key(session: AsyncSession, guild_id: int, provider: str, label: str) -> bool:
    """Delete one key of this server's pool (another server's keys are out of reach)."""
    result = await session.execute(delete(ServerApiKey).where(
        ServerApiKey.guild_id == guild_id, ServerApiKey.provider == provider,
        ServerApiKey.label == label,
    ))
    return bool(result.rowcount)


async def usable_server_keys(
    session: AsyncSession, vault: Vault, guild_id: int, provider: str, now: datetime,
) -> list[KeyLease]:
    """The pool for one provider minus cooling keys, least recently used first."""
    rows = await session.scalars(
        select(ServerApiKey).where(ServerApiKey.guild_id == guild_id, ServerApiKey.provider == provider)
        .order_by(ServerApiKey.last_used_at.is_not(None), ServerApiKey.last_used_at, ServerApiKey.id)
    )
    return [
        KeyLease(KeyRef("server", row.id), masked_tail(row.last4), vault.decrypt(row.encrypted_key))
        for row in rows if not health_of(row).cooling(now)
    ]


async def environment_key_health(session: AsyncSession, secrets: list[str]) -> list[KeyHealth]:
    """Health of the operator's DEFAULT_TEXT_API_KEYS, in their configured order."""
    prints = [fingerprint(s) for s in secrets]
    rows = {row.fingerprint: row for row in await session.scalars(
        select(EnvironmentKeyHealth).where(EnvironmentKeyHealth.fingerprint.in_(prints))
    )}
    empty = KeyHealth(0, 0, None, None)
    return [health_of(rows[p]) if p in rows else empty for p in prints]


async def usable_environment_keys(session: AsyncSession, secrets: list[str], now: datetime) -> list[KeyLease]:
    health = await environment_key_health(session, secrets)
    return [
        KeyLease(KeyRef("environment", fingerprint(s)), masked_tail(last4(s)), s)
        for s, h in zip(secrets, health, strict=True) if not h.cooling(now)
    ]


async def _health_target(session: AsyncSession, ref: KeyRef):
    if ref.kind == "server":
        return ServerApiKey, ServerApiKey.id == ref.ident
    if ref.kind == "personal":
        return PersonalConfig, PersonalConfig.id == ref.ident
    stmt = insert_for(session, EnvironmentKeyHealth).values(fingerprint=ref.ident, successes=0, errors=0)
    await session.execute(stmt.on_conflict_do_nothing(index_elements=["fingerprint"]))
    return EnvironmentKeyHealth, EnvironmentKeyHealth.fingerprint == ref.ident


async def record_key_success(session: AsyncSession, ref: KeyRef, now: datetime) -> None:
    model, where = await _health_target(session, ref)
    await session.execute(update(model).where(where).values(
        successes=model.successes + 1, last_used_at=now, cooling_down_until=None,
    ).execution_options(synchronize_session=False))


async def record_key_failure(
    session: AsyncSession, ref: KeyRef, error_type: str, now: datetime,
    cool_down_until: datetime | None = None,
) -> None:
    """Count an error; a cool-down only ever extends (a later, shorter one never cuts
    short a longer one another process set)."""
    model, where = await _health_target(session, ref)
    values = {"errors": model.errors + 1, "last_error_type": error_type[:64],
              "last_error_at": now, "last_used_at": now}
    if cool_down_until is not None:
        values["cooling_down_until"] = func.coalesce(
            func.max(model.cooling_down_until, cool_down_until)
            if session.get_bind().dialect.name == "sqlite"
            else func.greatest(model.cooling_down_until, cool_down_until),
            cool_down_until,
        )
    await session.execute(update(model).where(where).values(**values)
                          .execution_options(synchronize_session=False))
