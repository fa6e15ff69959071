"""A bot's configuration written straight to its database, and key health read back.

The turn tests set up what the slash commands would have stored (a custom endpoint on
the replay server, a key pool, a personal key) without going through Discord."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from bot import repo
from bot.db.models import PersonalConfig, ServerApiKey
from bot.repo.common import as_utc
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer


async def configure_server(bot, fake: FakeDiscord, server: ProviderReplayServer, *, model: str = "model-a",
                           keys: tuple[str, ...] = ("sk-pool-first", "sk-pool-second"),
                           fallbacks: tuple[str, ...] = ()) -> None:
    """A custom endpoint on the replay server, a key pool and a fallback chain."""
    guild = int(fake.guild_id)
    vault = bot.vault
    async with bot.sessions() as session, session.begin():
        await repo.set_custom_endpoint(session, guild, f"{server.url}/v1", model)
        for secret in keys:
            await repo.add_server_key(session, vault, guild, "custom", secret)
        for name in fallbacks:
            await repo.add_fallback(session, guild, "custom", name)


async def configure_personal(bot, fake: FakeDiscord, secret: str, *, provider: str = "anthropic",
                             model: str = "claude-personal", server_fallback: bool = True) -> None:
    guild, user = int(fake.guild_id), int(fake.member_user["id"])
    vault = bot.vault
    async with bot.sessions() as session, session.begin():
        await repo.set_personal_key(session, vault, user, guild, secret)
        await repo.set_personal_model(session, user, guild, provider, model)
        await repo.set_personal_override(session, user, guild, True)
        await repo.set_personal_server_fallback(session, user, guild, server_fallback)


async def server_keys(bot) -> dict[str, ServerApiKey]:
    """Stored pool rows by the last four characters of their (decrypted) key."""
    async with bot.sessions() as session:
        rows = await session.scalars(select(ServerApiKey).order_by(ServerApiKey.id))
        return {bot.vault.decrypt(row.encrypted_key)[-4:]: row for row in rows}


async def personal_row(bot) -> PersonalConfig:
    async with bot.sessions() as session:
        return (await session.scalars(select(PersonalConfig))).one()


def cooling_for(row: Any) -> float:
    """Seconds the row's key still rests (0 when it does not)."""
    until = as_utc(row.cooling_down_until)
    return 0.0 if until is None else (until - datetime.now(UTC)).total_seconds()
