"""The database cannot be reached when a member asks: they are told so (never silence),
or — when the operator allows it and the server's access rules are known (a DM, or a
server whose settings this process kept) — the environment default answers. A server
whose rules were never read is not answered: a blocked member could not be told apart."""

from __future__ import annotations

import shutil

from providers.i18n import t
from tests.support.check_answers import plain_answer_messages
from tests.support.data_openai_responses import responses_stream
from tests.support.drive_discord_client import running_bot
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer


async def break_database(bot) -> None:
    """Close every pooled connection and take the database file's folder away."""
    await bot.engine.dispose()
    database = bot.engine.url.database
    shutil.move(database.rsplit("/", 1)[0], database.rsplit("/", 1)[0] + "-gone")


async def ask(fake: FakeDiscord, text: str):
    return await fake.send_user_message(f"<@{fake.bot_user['id']}> {text}", mention_bot=True)


async def test_database_down_gets_a_short_reply_not_silence(fake_discord: FakeDiscord, tmp_path, turn_bot) -> None:
    fake = fake_discord
    (tmp_path / "db").mkdir(exist_ok=True)
    bot = turn_bot(DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/db/bot.sqlite3")
    async with running_bot(fake, bot) as run:
        await break_database(bot)
        await ask(fake, "hello?")
        await run.wait_for(lambda: len(plain_answer_messages(fake)) == 1)
    assert plain_answer_messages(fake)[0].content == t("chat.database_down", "en")


def default_route_bot(turn_bot, tmp_path, provider_server: ProviderReplayServer):
    (tmp_path / "db").mkdir(exist_ok=True)
    return turn_bot(DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/db/bot.sqlite3", DATABASE_DOWN_USES_DEFAULT="true",
                    DEFAULT_TEXT_PROVIDER="openai", DEFAULT_TEXT_MODEL="gpt-fake",
                    DEFAULT_TEXT_BASE_URL=f"{provider_server.url}/v1", DEFAULT_TEXT_API_KEYS="sk-env-default")


async def test_database_down_may_be_answered_by_the_environment_default(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, tmp_path, turn_bot) -> None:
    """The server's rules were read before the outage (kept): the default answers through it."""
    fake = fake_discord
    provider_server.enqueue(responses_stream("Answered with the database.", piece=6))
    provider_server.reply(responses_stream("Answered without the database.", piece=6))
    bot = default_route_bot(turn_bot, tmp_path, provider_server)
    async with running_bot(fake, bot) as run:
        await ask(fake, "before")
        await run.wait_for(lambda: any(m.content == "Answered with the database." for m in plain_answer_messages(fake)))
        await break_database(bot)
        await ask(fake, "hello?")
        await run.wait_for(lambda: any(m.content == "Answered without the database." for m in plain_answer_messages(fake)))
    assert [r.api_key for r in provider_server.requests] == ["sk-env-default"] * 2


async def test_a_never_read_server_is_not_answered_by_the_default_while_the_database_is_down(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, tmp_path, turn_bot) -> None:
    """The member is blocked in the database, which goes away before the server was ever
    read: the default must not answer (it could not know), the member hears the database is down."""
    from bot.repo.controls import add_access_rule

    fake = fake_discord
    provider_server.reply(responses_stream("must not be asked"))
    bot = default_route_bot(turn_bot, tmp_path, provider_server)
    async with running_bot(fake, bot) as run:
        async with bot.sessions() as session, session.begin():
            await add_access_rule(session, int(fake.guild_id), int(fake.member_user["id"]), "block_member")
        bot.config.clear()  # nothing of the server kept, as after a restart
        await break_database(bot)
        await ask(fake, "am I answered?")
        await run.wait_for(lambda: len(plain_answer_messages(fake)) == 1)
    assert plain_answer_messages(fake)[0].content == t("chat.database_down", "en")
    assert provider_server.requests == []
