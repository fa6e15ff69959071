"""Every pooled connection is taken (a real engine: one connection, no overflow, a short
pool timeout, and a connection this test holds): a turn answers from the configuration
the process keeps, or says — localized — that the bot is busy; never silence. The
failure is logged once and counted; the bookkeeping writes wait for the database
instead of being lost. Nothing here mocks SQLAlchemy."""

from __future__ import annotations

import logging

from prometheus_client import REGISTRY
from sqlalchemy import func, select

from bot.app import LLMBot
from bot.db.engine import create_engine
from bot.db.models import UsageDay
from bot.settings import load_settings
from providers.i18n import t
from tests.support.check_answers import delivered, plain_answer_messages
from tests.support.data_openai import openai_stream
from tests.support.drive_discord_client import fast_ready_kwargs, llmbot_factory, running_bot
from tests.support.drive_waiting import eventually
from tests.support.env_bot_config import configure_server
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer
from tests.turn.test_turn_discord import ask


def small_pool_bot(tmp_path) -> LLMBot:
    make = llmbot_factory(tmp_path, "busy.sqlite3")
    url = f"sqlite+aiosqlite:///{tmp_path}/busy.sqlite3"
    settings = load_settings(_env_file=None, DATABASE_URL=url, BOT_ENCRYPTION_KEY=make.encryption_key,
                             ALLOW_PRIVATE_ENDPOINTS="true", DATABASE_WRITE_BATCH_MS="50")
    engine = create_engine(url, pool_size=1, max_overflow=0, pool_timeout=0.2)
    return LLMBot(settings, engine=engine, **fast_ready_kwargs())


def turn_errors() -> float:
    return REGISTRY.get_sample_value("database_errors_total", {"during": "turn"}) or 0.0


async def test_an_unread_configuration_with_no_free_connection_says_busy_once(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, tmp_path, caplog) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("never asked"))
    bot = small_pool_bot(tmp_path)
    counted = turn_errors()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)  # written here: no copy kept until a turn reads it
        held = await bot.engine.connect()  # the pool's only connection
        try:
            with caplog.at_level(logging.INFO, logger="bot"):
                await ask(fake, "anyone?")
                await run.wait_for(lambda: len(plain_answer_messages(fake)) == 1)
        finally:
            await held.close()
    assert plain_answer_messages(fake)[0].content == t("chat.database_busy", "en")
    assert server.requests == []
    assert turn_errors() == counted + 1
    read = [r for r in caplog.records if r.name == "bot.load.config_cache" and r.levelno >= logging.ERROR]
    assert len(read) == 1 and "TimeoutError" in read[0].getMessage()  # the question's one read, logged once


async def test_a_kept_configuration_answers_with_no_free_connection_and_nothing_is_lost(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, tmp_path) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(openai_stream("The first answer.", piece=5))
    server.reply(openai_stream("Answered while the database was busy.", piece=6))
    bot = small_pool_bot(tmp_path)
    counted = turn_errors()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "first")
        await run.wait_for(lambda: delivered(fake, "The first answer."))
        held = await bot.engine.connect()
        try:
            await ask(fake, "second")
            await run.wait_for(lambda: any(m.content == "Answered while the database was busy."
                                           for m in plain_answer_messages(fake)))
            assert len(bot.writes) >= 1  # the key's health and the usage wait for a connection
        finally:
            await held.close()

        async def both_answers_counted() -> None:
            async with bot.sessions() as session:
                assert await session.scalar(select(func.sum(UsageDay.messages))) == 2

        await eventually(both_answers_counted)
    assert turn_errors() == counted  # the turn itself never needed the database
    assert [r.api_key for r in server.requests] == ["sk-pool-first", "sk-pool-second"]  # rotated
