"""How much database work one answered mention costs, counted with SQLAlchemy's engine
events on the real bot (real SQLite file, real discord.py, the replay provider).

Before the configuration cache and the batched writes (issue 14), one answered mention
on a server with a custom endpoint and a two-key pool cost 11 connection checkouts,
29 reads and 3 writes, each write in its own transaction."""

from __future__ import annotations

import re

from sqlalchemy import func, select

from bot.db.engine import create_engine, session_factory
from bot.db.models import UsageDay
from tests.support.check_answers import delivered
from tests.support.check_database_work import counted
from tests.support.data_openai import openai_stream
from tests.support.drive_discord_client import running_bot
from tests.support.drive_waiting import eventually
from tests.support.env_bot_config import configure_server
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer
from tests.turn.test_turn_discord import ask

# Tables of configuration: read once per change into the cache, never per answer.
CONFIGURATION = ("servers", "server_text_configs", "server_capabilities", "server_api_keys", "model_fallbacks",
                 "personal_configs", "personas", "channel_modes", "channel_rules", "access_rules",
                 "generation_params", "usage_limits", "environment_key_health")


def tables_read(statements: list[str]) -> set[str]:
    return {m.group(1) for s in statements if s.startswith("SELECT") for m in re.finditer(r"FROM (\w+)", s)}


def answers_recorded(database_url: str, count: int):
    """A check, on its own engine (not counted), that `count` answers reached the usage rows."""
    async def check() -> None:
        engine = create_engine(database_url)
        try:
            async with session_factory(engine)() as session:
                total = await session.scalar(select(func.sum(UsageDay.messages)))
        finally:
            await engine.dispose()
        assert total == count
    return check


async def test_an_answered_mention_reads_no_configuration_and_writes_in_one_batch(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    text = "Counted and answered."
    server.reply(openai_stream(text, piece=6))
    bot = turn_bot(CONFIG_POLL_SECONDS="60")  # the poll (per process, not per answer) stays out of the count
    url = bot.settings.DATABASE_URL
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "warm the cache")  # the server's first turn reads its configuration
        await run.wait_for(lambda: delivered(fake, text))
        await eventually(answers_recorded(url, 1))
        with counted(bot.engine) as work:
            await ask(fake, "how much work?")
            await run.wait_for(lambda: len(server.requests) == 2)
            await eventually(answers_recorded(url, 2))
    reads, writes = work.reads_and_writes()
    print(f"\nper answered mention: {work.checkouts} checkouts, {reads} reads, {writes} writes")
    print("\n".join(f"   {s}" for s in work.statements))
    assert tables_read(work.statements).isdisjoint(CONFIGURATION), work.statements
    assert reads == 0, work.statements  # configuration, history depth and thread switch are cached
    assert writes <= 3, work.statements  # answer parts; key health and usage batched
    assert work.checkouts <= 3, work.statements
