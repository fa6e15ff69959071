"""Server key pools and key health.

Health (successes, errors, last error, cool-down) is written with single UPDATE
statements that increment in SQL, so shard processes sharing one database never lose
each other's counts, and a cool-down set by one process is seen by all.

A key stored under an encryption key the operator has since dropped cannot be
decrypted: such a row is skipped (and listed as undecryptable), never fatal for the rest.
"""

from __future__ import annotations

import hmac
import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import Integer, bindparam, delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import EnvironmentKeyHealth, PersonalConfig, ServerApiKey
from bot.repo.common import (
    RepositoryError,
    as_utc,
    conflicts_as,
    has_control,
    insert_for,
    kept_statement,
    lock_server,
    refuse_control,
)
from bot.repo.servers import check_provider
from bot.repo.versions import bump, config_write
from bot.vault import Vault, fingerprint, last4, mask, masked_tail
from providers import KNOWN_PROVIDERS

log = logging.getLogger(__name__)

MAX_LABEL_LENGTH = 64
MAX_KEY_LENGTH = 1024
MAX_POOL_SIZE = 25

# "keyless": a custom endpoint its managers set up without a key (no health is kept).
KeyKind = Literal["server", "personal", "environment", "keyless"]


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
    """A stored key as it may be shown: masked, with its health. `undecryptable` is set
    when the listing was given the vault and none of its keys opens this one."""

    id: int
    provider: str
    label: str
    masked: str
    health: KeyHealth
    undecryptable: bool = False


@dataclass(frozen=True)
class KeyLease:
    """A decrypted key handed to the generation turn; its repr never shows the secret."""

    ref: KeyRef
    masked: str
    secret: str = field(repr=False)


# The one lease of a keyless endpoint: no secret, so no Authorization header is sent.
KEYLESS_LEASE = KeyLease(KeyRef("keyless", "keyless"), "no key", "")


class KeyPool(list[KeyLease]):
    """The usable keys of one model, in the order to try them; `configured` is False when
    no key is stored for it at all (as opposed to every key resting after errors)."""

    def __init__(self, leases: list[KeyLease] | None = None, *, configured: bool = True) -> None:
        super().__init__(leases or [])
        self.configured = configured


def check_secret(secret: str) -> str:
    value = refuse_control(secret.strip())
    if not value:
        raise RepositoryError("empty_key")
    if len(value) > MAX_KEY_LENGTH or any(c.isspace() for c in value):
        raise RepositoryError("bad_key")
    return value


def check_label(label: str | None) -> str:
    """A manager's label, trimmed to what the column holds ("" means pick one)."""
    return refuse_control((label or "").strip())[:MAX_LABEL_LENGTH]


def health_of(row) -> KeyHealth:
    return KeyHealth(row.successes, row.errors, row.last_error_type, as_utc(row.cooling_down_until))


def _info(row: ServerApiKey, vault: Vault | None = None) -> KeyInfo:
    secret = vault.try_decrypt(row.encrypted_key) if vault is not None else None
    masked = mask(secret) if secret is not None else masked_tail(row.last4)
    return KeyInfo(row.id, row.provider, row.label, masked, health_of(row),
                   undecryptable=vault is not None and secret is None)


def _readable(vault: Vault, row: StoredKey) -> str | None:
    """The key, or None (logged by label and mask only) when it cannot be decrypted."""
    secret = vault.try_decrypt(row.encrypted)
    if secret is None:
        log.warning("server key `%s` (%s %s, guild %s) cannot be decrypted with the configured "
                    "BOT_ENCRYPTION_KEY; skipped", row.label, row.provider,
                    masked_tail(row.last4), row.guild_id)
    return secret


def _same_key(vault: Vault, row: ServerApiKey, secret: str, key_print: str) -> bool:
    # Rows older than fingerprints, or fingerprinted under an older encryption key, are
    # compared by decrypting them.
    if row.key_fingerprint == key_print:
        return True
    stored = vault.try_decrypt(row.encrypted_key)
    return stored is not None and hmac.compare_digest(stored, secret)


@conflicts_as("conflict")
@config_write("server", "guild_id")
async def add_server_key(
    session: AsyncSession, vault: Vault, guild_id: int, provider: str, secret: str,
    label: str | None = None,
) -> KeyInfo:
    """Encrypt and store a key in the pool; the same key twice is refused.

    Under the server's row lock, so processes adding at the same moment see each other's
    keys; the unique fingerprint and label constraints hold even without it.
    """
    provider = check_provider(provider)
    secret = check_secret(secret)
    label = check_label(label)
    await lock_server(session, guild_id)
    pool = list(await session.scalars(
        select(ServerApiKey).where(ServerApiKey.guild_id == guild_id, ServerApiKey.provider == provider)
    ))
    key_print = vault.key_fingerprint(secret)
    if any(_same_key(vault, row, secret, key_print) for row in pool):
        raise RepositoryError("key_duplicate")
    if len(pool) >= MAX_POOL_SIZE:
        raise RepositoryError("pool_full", limit=MAX_POOL_SIZE)
    taken = {row.label for row in pool}
    chosen = bool(label)
    if not chosen:
        label = next(f"key-{n}" for n in range(1, len(pool) + 2) if f"key-{n}" not in taken)
    elif label in taken:
        raise RepositoryError("label_taken", label=label)
    stmt = insert_for(session, ServerApiKey).values(
        guild_id=guild_id, provider=provider, label=label, encrypted_key=vault.encrypt(secret),
        last4=last4(secret), key_fingerprint=key_print, successes=0, errors=0,
    )
    new_id = await session.scalar(stmt.on_conflict_do_nothing().returning(ServerApiKey.id))
    if new_id is None:  # a writer that skipped the lock (an older version) got there first
        raise await _lost_race(session, guild_id, provider, key_print, label if chosen else None)
    return KeyInfo(new_id, provider, label, mask(secret), KeyHealth(0, 0, None, None))


async def _lost_race(session: AsyncSession, guild_id: int, provider: str, key_print: str,
                     label: str | None) -> RepositoryError:
    """Which constraint refused the insert: the same key, else the manager's label (a
    label we picked ourselves only needs another try)."""
    same = await session.scalar(select(ServerApiKey.id).where(
        ServerApiKey.guild_id == guild_id, ServerApiKey.provider == provider,
        ServerApiKey.key_fingerprint == key_print,
    ))
    if same is not None:
        return RepositoryError("key_duplicate")
    return RepositoryError("label_taken", label=label) if label else RepositoryError("conflict")


async def list_server_keys(
    session: AsyncSession, guild_id: int, provider: str | None = None, *, vault: Vault | None = None,
) -> list[KeyInfo]:
    """The pool as it may be shown. Given the vault, each key is test-decrypted so a
    listing can say which ones are undecryptable instead of calling them ready."""
    if provider is not None and provider not in KNOWN_PROVIDERS:
        return []  # no such pool (and nothing the database could be asked about)
    stmt = select(ServerApiKey).where(ServerApiKey.guild_id == guild_id)
    if provider is not None:
        stmt = stmt.where(ServerApiKey.provider == provider)
    rows = await session.scalars(stmt.order_by(ServerApiKey.provider, ServerApiKey.id))
    return [_info(row, vault) for row in rows]


@config_write("server", "guild_id")
async def remove_server_key(session: AsyncSession, guild_id: int, provider: str, label: str) -> bool:
    """Delete one key of this server's pool (another server's keys are out of reach)."""
    if has_control(provider) or has_control(label):
        return False  # no stored label or provider holds one
    result = await session.execute(delete(ServerApiKey).where(
        ServerApiKey.guild_id == guild_id, ServerApiKey.provider == provider,
        ServerApiKey.label == label,
    ))
    return bool(result.rowcount)


@dataclass(frozen=True)
class StoredKey:
    """A pool key as the configuration cache keeps it: still encrypted (decrypted only
    when leased), with its health as last read."""

    ref: KeyRef
    provider: str
    encrypted: bytes = field(repr=False)
    last4: str | None
    label: str
    guild_id: int
    health: KeyHealth


async def server_key_rows(session: AsyncSession, guild_id: int, provider: str | None = None) -> list[StoredKey]:
    """The server's stored keys (one provider's, or all), least recently used first."""
    stmt = select(ServerApiKey).where(ServerApiKey.guild_id == guild_id)
    if provider is not None:
        stmt = stmt.where(ServerApiKey.provider == provider)
    rows = await session.scalars(stmt.order_by(ServerApiKey.last_used_at.is_not(None), ServerApiKey.last_used_at,
                                               ServerApiKey.id))
    return [StoredKey(KeyRef("server", row.id), row.provider, row.encrypted_key, row.last4, row.label,
                      row.guild_id, health_of(row)) for row in rows]


def usable_leases(vault: Vault, keys: list[StoredKey], provider: str, now: datetime) -> KeyPool:
    """The keys of `provider` minus cooling and undecryptable ones, in the given order
    (`configured` says whether any key of it is stored at all)."""
    leases = KeyPool(configured=False)
    for key in keys:
        if key.provider != provider:
            continue
        leases.configured = True
        if key.health.cooling(now) or (secret := _readable(vault, key)) is None:
            continue
        leases.append(KeyLease(key.ref, mask(secret), secret))
    return leases


async def usable_server_keys(
    session: AsyncSession, vault: Vault, guild_id: int, provider: str, now: datetime,
) -> list[KeyLease]:
    """The pool for one provider minus cooling and undecryptable keys, least recently
    used first (`configured` says whether any key is stored at all)."""
    return usable_leases(vault, await server_key_rows(session, guild_id, provider), provider, now)


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
    return KeyPool([
        KeyLease(KeyRef("environment", fingerprint(s)), masked_tail(last4(s)), s)
        for s, h in zip(secrets, health, strict=True) if not h.cooling(now)
    ], configured=bool(secrets))


async def _health_target(session: AsyncSession, ref: KeyRef):
    if ref.kind == "server":
        return ServerApiKey, ServerApiKey.id == ref.ident
    if ref.kind == "personal":
        return PersonalConfig, PersonalConfig.id == ref.ident
    stmt = insert_for(session, EnvironmentKeyHealth).values(fingerprint=ref.ident, successes=0, errors=0)
    await session.execute(stmt.on_conflict_do_nothing(index_elements=["fingerprint"]))
    return EnvironmentKeyHealth, EnvironmentKeyHealth.fingerprint == ref.ident


# Whose cached configuration holds a key's health: the server's pool, the member's own
# key, or the operator's environment keys (one scope for all of them).
_OWNERS = {"server": ("server", ServerApiKey.guild_id), "personal": ("member", PersonalConfig.user_id),
           "environment": ("environment", None)}


async def record_key_success(session: AsyncSession, ref: KeyRef, now: datetime, count: int = 1) -> None:
    """`count` answers succeeded with the key, the last at `now`; a rest ends early. One
    statement, built once (each batch of bookkeeping writes one per key in use)."""
    if ref.kind == "keyless":
        return  # no key, no health
    stmt = kept_statement(session, ("key_success", ref.kind), lambda s: _success_statement(s, ref.kind))
    await session.execute(stmt, {"ident": ref.ident, "count": count, "now": now})


def _success_statement(session: AsyncSession, kind: KeyKind) -> Any:
    """Add `:count` successes to the key `:ident` at `:now` and end its rest: a stored key's
    row is updated; an environment key's row is made by the first success (an upsert)."""
    if kind == "environment":
        table = EnvironmentKeyHealth.__table__
        stmt = insert_for(session, table).values(
            fingerprint=bindparam("ident", type_=table.c.fingerprint.type),
            successes=bindparam("count", type_=Integer), errors=0,
            last_used_at=bindparam("now", type_=table.c.last_used_at.type), cooling_down_until=None)
        return stmt.on_conflict_do_update(index_elements=["fingerprint"], set_={
            "successes": table.c.successes + stmt.excluded.successes,
            "last_used_at": stmt.excluded.last_used_at, "cooling_down_until": None})
    table = (ServerApiKey if kind == "server" else PersonalConfig).__table__
    return update(table).where(table.c.id == bindparam("ident")).values(
        successes=table.c.successes + bindparam("count", type_=Integer),
        last_used_at=bindparam("now", type_=table.c.last_used_at.type), cooling_down_until=None)


async def record_key_failure(
    session: AsyncSession, ref: KeyRef, error_type: str, now: datetime,
    cool_down_until: datetime | None = None,
) -> None:
    """Count an error; a cool-down only ever extends (a later, shorter one never cuts
    short a longer one another process set)."""
    if ref.kind == "keyless":
        return  # no key to rest: the endpoint's failures are the route's to handle
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
    stmt = update(model).where(where).values(**values).execution_options(synchronize_session=False)
    if cool_down_until is None:
        await session.execute(stmt)
        return
    # A rest changes which keys every process may lease: their cached pools must drop it.
    scope, owner = _OWNERS[ref.kind]
    if owner is None:
        await session.execute(stmt)
        await bump(session, scope, 0)
    elif (scope_id := await session.scalar(stmt.returning(owner))) is not None:
        await bump(session, scope, scope_id)
