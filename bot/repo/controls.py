"""What a server's managers decided about the bot's voice and audience: personas (the
server's and per channel), the channel mode, channel allow/deny rules and member/role
access rules.

Writes are single upserts (INSERT ... ON CONFLICT) or deletes, so shard processes
writing at the same moment neither crash on a unique constraint nor store a rule twice.
Everything a message needs is read at once by `read_controls`.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Literal

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import AccessRule, ChannelMode, ChannelRule, Persona
from bot.repo.common import RepositoryError, ensure_server, insert_for
from bot.repo.versions import config_write

MAX_PERSONA_LENGTH = 4000
# Layout characters a written persona may hold; every other control character is refused.
PERSONA_LAYOUT = frozenset("\n\t")

Mode = Literal["everywhere", "allowlist"]
Rule = Literal["allow", "deny"]
AccessKind = Literal["block_member", "block_role", "require_role"]
MODES: tuple[str, ...] = ("everywhere", "allowlist")
RULES: tuple[str, ...] = ("allow", "deny")
ACCESS_KINDS: tuple[str, ...] = ("block_member", "block_role", "require_role")


@dataclass(frozen=True)
class GuildControls:
    """A server's channel and access settings as one message needs them."""

    mode: str = "everywhere"
    allowed: frozenset[int] = field(default_factory=frozenset)
    denied: frozenset[int] = field(default_factory=frozenset)
    blocked_members: frozenset[int] = field(default_factory=frozenset)
    blocked_roles: frozenset[int] = field(default_factory=frozenset)
    required_roles: frozenset[int] = field(default_factory=frozenset)


def check_persona(body: str) -> str:
    """A persona as stored: Windows line ends made plain, trimmed, within the length, and
    no control character but line breaks and tabs (PostgreSQL refuses NUL outright)."""
    value = body.replace("\r\n", "\n").strip()
    if any(unicodedata.category(c) == "Cc" and c not in PERSONA_LAYOUT for c in value):
        raise RepositoryError("persona_control_characters")
    if len(value) > MAX_PERSONA_LENGTH:
        raise RepositoryError("persona_too_long", limit=MAX_PERSONA_LENGTH, length=len(value))
    if not value:
        raise RepositoryError("persona_empty")
    return value


def _persona_where(guild_id: int, channel_id: int | None):
    column = Persona.channel_id
    return (Persona.guild_id == guild_id,
            column.is_(None) if channel_id is None else column == channel_id)


@config_write("server", "guild_id")
async def set_persona(session: AsyncSession, guild_id: int, channel_id: int | None, body: str) -> str:
    """Store the server's persona (channel_id None) or one channel's; returns the text kept."""
    value = check_persona(body)
    await ensure_server(session, guild_id)
    stmt = insert_for(session, Persona).values(guild_id=guild_id, channel_id=channel_id, body=value)
    if channel_id is None:
        stmt = stmt.on_conflict_do_update(index_elements=["guild_id"], index_where=Persona.channel_id.is_(None),
                                          set_={"body": value})
    else:
        stmt = stmt.on_conflict_do_update(index_elements=["guild_id", "channel_id"], set_={"body": value})
    await session.execute(stmt)
    return value


async def get_persona(session: AsyncSession, guild_id: int, channel_id: int | None) -> str | None:
    """Exactly the persona of that scope (no falling back to the server's)."""
    return await session.scalar(select(Persona.body).where(*_persona_where(guild_id, channel_id)))


@config_write("server", "guild_id")
async def clear_persona(session: AsyncSession, guild_id: int, channel_id: int | None) -> bool:
    result = await session.execute(delete(Persona).where(*_persona_where(guild_id, channel_id)))
    return bool(result.rowcount)


async def count_channel_personas(session: AsyncSession, guild_id: int) -> int:
    rows = await session.scalars(select(Persona.id).where(Persona.guild_id == guild_id,
                                                          Persona.channel_id.is_not(None)))
    return len(rows.all())


@config_write("server", "guild_id")
async def set_channel_mode(session: AsyncSession, guild_id: int, mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"unknown channel mode {mode!r}")
    await ensure_server(session, guild_id)
    stmt = insert_for(session, ChannelMode).values(guild_id=guild_id, mode=mode)
    await session.execute(stmt.on_conflict_do_update(index_elements=["guild_id"], set_={"mode": mode}))


@config_write("server", "guild_id")
async def set_channel_rule(session: AsyncSession, guild_id: int, channel_id: int, rule: str) -> None:
    """Allow or deny one channel; a channel holds one rule, so the newer one replaces it."""
    if rule not in RULES:
        raise ValueError(f"unknown channel rule {rule!r}")
    await ensure_server(session, guild_id)
    stmt = insert_for(session, ChannelRule).values(guild_id=guild_id, channel_id=channel_id, rule=rule)
    await session.execute(stmt.on_conflict_do_update(index_elements=["guild_id", "channel_id"],
                                                     set_={"rule": rule}))


@config_write("server", "guild_id")
async def add_access_rule(session: AsyncSession, guild_id: int, target_id: int, kind: str) -> bool:
    """Block a member or role, or require a role; False when that rule already existed."""
    if kind not in ACCESS_KINDS:
        raise ValueError(f"unknown access rule {kind!r}")
    await ensure_server(session, guild_id)
    stmt = insert_for(session, AccessRule).values(guild_id=guild_id, target_id=target_id, kind=kind)
    new_id = await session.scalar(stmt.on_conflict_do_nothing().returning(AccessRule.id))
    return new_id is not None


@config_write("server", "guild_id")
async def remove_access_rule(session: AsyncSession, guild_id: int, target_id: int,
                             kinds: tuple[str, ...]) -> bool:
    result = await session.execute(delete(AccessRule).where(
        AccessRule.guild_id == guild_id, AccessRule.target_id == target_id, AccessRule.kind.in_(kinds)))
    return bool(result.rowcount)


async def read_controls(session: AsyncSession, guild_id: int) -> GuildControls:
    """The server's channel mode, channel rules and access rules (defaults when none)."""
    mode = await session.scalar(select(ChannelMode.mode).where(ChannelMode.guild_id == guild_id))
    rules = (await session.execute(select(ChannelRule.channel_id, ChannelRule.rule)
                                   .where(ChannelRule.guild_id == guild_id))).all()
    access = (await session.execute(select(AccessRule.target_id, AccessRule.kind)
                                    .where(AccessRule.guild_id == guild_id))).all()

    def ids(rows, name: str) -> frozenset[int]:
        return frozenset(target for target, label in rows if label == name)

    return GuildControls(mode=mode or "everywhere", allowed=ids(rules, "allow"), denied=ids(rules, "deny"),
                         blocked_members=ids(access, "block_member"), blocked_roles=ids(access, "block_role"),
                         required_roles=ids(access, "require_role"))
