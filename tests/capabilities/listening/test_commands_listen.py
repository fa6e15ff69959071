"""`/settings batch-seconds` and `/channels listen|listen-stop` through the fake Discord:
the Manage Server gate, the bounds refused in words that name them, the values stored,
shown by `/channels list` and `/status`, and seen by the configuration read."""

from __future__ import annotations

from typing import Any

from bot.capabilities.listening.settings import LISTENING
from bot.capabilities.listening.storage import listen_channels
from bot.db.engine import create_engine
from bot.load.config_cache import ConfigCache
from bot.repo.capability_settings import read_values
from tests.support.drive_commands import NO_PERMISSIONS, command, mention, sub
from tests.support.drive_discord_client import running_bot

REFUSED = "You need the Manage Server permission for this command."


def number(name: str, value: float) -> dict[str, Any]:
    """A NUMBER option (type 10): `opt` only makes integers, strings and booleans."""
    return {"type": 10, "name": name, "value": value}


def channel(fake, channel_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A text-channel option and the resolved data Discord sends with it."""
    resolved = {"channels": {channel_id: {
        "id": channel_id, "type": 0, "name": "general", "guild_id": fake.guild_id,
        "permissions": "2248473465835073", "position": 0, "nsfw": False, "parent_id": None}}}
    return {"type": 7, "name": "channel", "value": channel_id}, resolved


async def listen(run, fake, channel_id: str, *extra: dict[str, Any], name: str = "listen", **kwargs):
    option, resolved = channel(fake, channel_id)
    return await command(run, fake, "channels", sub(name, option, *extra), resolved=resolved, **kwargs)


async def stored(bot, guild_id: int) -> tuple[dict[int, float], float]:
    async with bot.sessions() as session:
        return await listen_channels(session, guild_id), (await read_values(session, LISTENING, guild_id))["batch_seconds"]


async def test_batch_seconds_stored_bounded_and_refused_to_members(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    guild = int(fake.guild_id)
    async with running_bot(fake, bot) as run:
        refused = await command(run, fake, "settings", sub("batch-seconds", number("seconds", 4)),
                                permissions=NO_PERMISSIONS)
        assert (refused.content, refused.ephemeral) == (REFUSED, True)
        assert (await stored(bot, guild))[1] == 2.0  # the default, nothing written

        set_ = await command(run, fake, "settings", sub("batch-seconds", number("seconds", 3.5)))
        assert (set_.content, set_.ephemeral) == (
            "Back-to-back messages of one member, each within 3.5 s of the previous, become one question.", True)
        assert (await stored(bot, guild))[1] == 3.5
        for bad in (10.5, -1):
            out = await command(run, fake, "settings", sub("batch-seconds", number("seconds", bad)))
            assert out.content == "The batch window must be between 0 and 10 seconds. Nothing was stored."
        ja = await command(run, fake, "settings", sub("batch-seconds", number("seconds", 11)), locale="ja")
        assert ja.content == "まとめ秒数は 0〜10 秒の範囲で指定してください。何も保存していません。"
        assert (await stored(bot, guild))[1] == 3.5

        off = await command(run, fake, "settings", sub("batch-seconds", number("seconds", 0)))
        assert off.content == "Batching is off: every message is its own question."
        assert (await stored(bot, guild))[1] == 0.0


async def test_listen_channels_stored_bounded_and_refused_to_members(fake_discord, bot_factory):
    fake = fake_discord
    fake.populate(channels=11, members=0)
    bot = bot_factory()
    guild, general = int(fake.guild_id), fake.channel_id
    async with running_bot(fake, bot) as run:
        for name in ("listen", "listen-stop"):
            refused = await listen(run, fake, general, name=name, permissions=NO_PERMISSIONS)
            assert (refused.content, refused.ephemeral) == (REFUSED, True)
        assert (await stored(bot, guild))[0] == {}

        on = await listen(run, fake, general)
        assert (on.content, on.ephemeral) == (
            f"The bot listens in <#{general}>: every member message there is a question, "
            "with at least 5 s between answers.", True)
        again = await listen(run, fake, general, number("gap", 30))  # changes the gap, stays one channel
        assert again.content.endswith("with at least 30 s between answers.")
        assert (await stored(bot, guild))[0] == {int(general): 30.0}
        too_long = await listen(run, fake, general, number("gap", 301))
        assert too_long.content == "The gap must be between 0 and 300 seconds. Nothing was stored."
        assert (await stored(bot, guild))[0] == {int(general): 30.0}

        for crowd in fake.crowd_channels[:9]:
            await listen(run, fake, crowd, number("gap", 0))
        full = await listen(run, fake, fake.crowd_channels[9])
        assert full.content == ("A server can listen in at most 10 channels. Stop one first with "
                                f"{mention(fake, 'channels listen-stop')}. Nothing was stored.")
        ja_full = await listen(run, fake, fake.crowd_channels[10], locale="ja")
        assert "最大 10 件" in ja_full.content
        assert len((await stored(bot, guild))[0]) == 10

        stop = await listen(run, fake, general, name="listen-stop")
        assert stop.content == f"The bot no longer listens in <#{general}>: members mention it there again."
        stop_again = await listen(run, fake, general, name="listen-stop")
        assert stop_again.content == f"The bot was not listening in <#{general}>."
        assert int(general) not in (await stored(bot, guild))[0]
        room = await listen(run, fake, fake.crowd_channels[9])  # a place was freed
        assert room.content.startswith(f"The bot listens in <#{fake.crowd_channels[9]}>")


async def test_listening_where_the_rules_keep_the_bot_out_warns(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    general = fake.channel_id
    async with running_bot(fake, bot) as run:
        option, resolved = channel(fake, general)
        await command(run, fake, "channels", sub("deny", {**option}), resolved=resolved)
        denied = await listen(run, fake, general)
        assert denied.content.splitlines()[1] == (
            f"Note: <#{general}> is denied, and the deny rule still applies: the bot stays silent there "
            f"until {mention(fake, 'channels allow')} lifts it.")
        await command(run, fake, "channels", sub("allow", {**option}), resolved=resolved)
        allowed = await listen(run, fake, general)
        assert len(allowed.content.splitlines()) == 1
        await command(run, fake, "channels", sub("mode", {"type": 3, "name": "mode", "value": "allowlist"}))
        thought = fake.thought_channel_id
        outside = await listen(run, fake, thought, locale="ja")
        assert outside.content.splitlines()[1].startswith("注意: ボットは許可したチャンネルでのみ応答し")
    async with bot.sessions() as session:
        assert set(await listen_channels(session, int(fake.guild_id))) == {int(general), int(thought)}


async def test_list_and_status_show_listen_channels_and_batch(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    general = fake.channel_id
    async with running_bot(fake, bot) as run:
        before = await command(run, fake, "channels", sub("list"))
        assert before.content.splitlines()[-2:] == [
            "Listen channels: -", "Batch window: 2 s between one member's back-to-back messages."]
        await listen(run, fake, general, number("gap", 12.5))
        await command(run, fake, "settings", sub("batch-seconds", number("seconds", 0)))
        listed = await command(run, fake, "channels", sub("list"))
        assert listed.content.splitlines()[-2:] == [
            f"Listen channels: <#{general}> (gap 12.5 s)", "Batch window: off (every message is its own question)."]
        status = await command(run, fake, "status")
        assert f"Listen channels: <#{general}> (gap 12.5 s)" in status.content.splitlines()
        assert "Batch window: off (every message is its own question)." in status.content.splitlines()
        ja = await command(run, fake, "status", locale="ja")
        assert f"常時応答チャンネル: <#{general}>（間隔 12.5 秒）" in ja.content.splitlines()
        member_view = await command(run, fake, "status", permissions=NO_PERMISSIONS)
        assert "Listen channels" not in member_view.content


async def test_a_command_write_is_seen_by_the_configuration_read_here_and_elsewhere(fake_discord, bot_factory):
    """This process drops its copy at commit; another process sharing the database drops
    its copy at its next poll (the write bumped the server's stamp)."""
    fake = fake_discord
    bot = bot_factory()
    guild, general = int(fake.guild_id), fake.channel_id
    async with running_bot(fake, bot) as run:
        elsewhere = ConfigCache(create_engine(str(bot.engine.url)), bot.settings)
        try:
            await elsewhere.poll()
            here_before, there_before = await bot.config.server(guild), await elsewhere.server(guild)
            assert (here_before.batch_seconds, dict(here_before.listen_channels)) == (2.0, {})
            assert (there_before.batch_seconds, dict(there_before.listen_channels)) == (2.0, {})
            await listen(run, fake, general, number("gap", 7))
            await command(run, fake, "settings", sub("batch-seconds", number("seconds", 1.5)))
            here = await bot.config.server(guild)
            assert (here.batch_seconds, dict(here.listen_channels)) == (1.5, {int(general): 7.0})
            assert (await elsewhere.server(guild)).batch_seconds == 2.0  # its copy, until it polls
            assert await elsewhere.poll() == 1
            there = await elsewhere.server(guild)
            assert (there.batch_seconds, dict(there.listen_channels)) == (1.5, {int(general): 7.0})
        finally:
            await elsewhere.close()
            await elsewhere.sessions.kw["bind"].dispose()
