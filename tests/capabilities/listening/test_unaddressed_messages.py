"""A member message that does not address the bot reads the server's configuration only
where the server may listen: servers with a listen channel are known from the first
poll, and a server that begins to listen elsewhere is known after this process's poll."""

from __future__ import annotations

from bot.capabilities.listening.storage import set_listen_channel
from bot.load.config_cache import ConfigCache
from bot.settings import load_settings
from tests.support.check_database_work import counted
from tests.support.drive_discord_client import running_bot

GUILD, OTHER_GUILD, CHANNEL = 4242, 4343, 77


async def test_servers_that_listen_are_known_from_the_first_poll(engine_factory):
    settings = load_settings(_env_file=None)
    here, there = ConfigCache(engine_factory(), settings), ConfigCache(engine_factory(), settings)
    async with there.sessions() as session, session.begin():
        await set_listen_channel(session, GUILD, CHANNEL)
    assert here.may_listen(OTHER_GUILD)  # before the first poll nothing is known: it may
    await here.poll()
    await there.poll()
    assert here.may_listen(GUILD) and not here.may_listen(OTHER_GUILD)
    async with there.sessions() as session, session.begin():
        await set_listen_channel(session, OTHER_GUILD, CHANNEL)
    assert there.may_listen(OTHER_GUILD)  # its own write, at commit
    assert not here.may_listen(OTHER_GUILD)  # not polled yet
    await here.poll()
    assert here.may_listen(OTHER_GUILD)


async def test_chatter_in_a_server_without_listen_channels_reads_nothing(fake_discord, bot_factory):
    fake, bot = fake_discord, bot_factory()
    async with running_bot(fake, bot):
        await bot.config.poll()
        chat = bot.get_cog("ChatCog")
        channel = bot.get_channel(int(fake.channel_id))
        stored = await fake.send_user_message("just talking among ourselves")
        message = await channel.fetch_message(int(stored.id))
        bot.config.clear()  # nothing kept: a read would show
        with counted(bot.engine) as work:
            assert await chat.answering.question_of(message) is None
        assert work.statements == []
        async with bot.sessions() as session, session.begin():
            await set_listen_channel(session, int(fake.guild_id), int(fake.channel_id))
        listened = await chat.answering.question_of(message)
        assert listened is not None and listened.listening is not None
