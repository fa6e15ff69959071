"""`/settings ...` and `/status` through the fake Discord."""

from __future__ import annotations

from bot import repo
from tests.support.drive_commands import (
    NO_PERMISSIONS,
    command,
    group,
    member,
    mention,
    opt,
    sub,
    submit_modal,
)
from tests.support.drive_discord_client import running_bot

REFUSED = "You need the Manage Server permission for this command."


def channel_option(fake):
    resolved = {"channels": {fake.thought_channel_id: {
        "id": fake.thought_channel_id, "type": 0, "name": "thought-log", "guild_id": fake.guild_id,
        "permissions": "2248473465835073", "position": 1, "nsfw": False, "parent_id": None}}}
    return {"type": 7, "name": "channel", "value": fake.thought_channel_id}, resolved


async def server(bot, fake):
    async with bot.sessions() as session:
        return await repo.get_server_settings(session, int(fake.guild_id))


async def test_server_switches_set_and_clear(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    async with running_bot(fake, bot) as run:
        on = await command(run, fake, "settings", sub("verbatim-tools", opt("enabled", True)))
        assert (on.content, on.ephemeral) == ("Verbatim tool calling is on.", True)
        keys = await command(run, fake, "settings", sub("member-keys", opt("required", True)), locale="ja")
        assert keys.content == "このサーバーではメンバーが自分のAPIキーを使う必要があります。"
        option, resolved = channel_option(fake)
        log_set = await command(run, fake, "settings", sub("thought-log-set", option), resolved=resolved)
        assert log_set.content == f"Model reasoning will be posted in <#{fake.thought_channel_id}>."
        stored = await server(bot, fake)
        assert stored.verbatim_tool_calling_enabled and stored.member_keys_required
        assert stored.thought_log_channel_id == int(fake.thought_channel_id)

        off = await command(run, fake, "settings", sub("verbatim-tools", opt("enabled", False)))
        assert off.content == "Verbatim tool calling is off."
        await command(run, fake, "settings", sub("member-keys", opt("required", False)))
        cleared = await command(run, fake, "settings", sub("thought-log-clear"))
        assert cleared.content == "The thought log is off."
        stored = await server(bot, fake)
    assert not stored.verbatim_tool_calling_enabled and not stored.member_keys_required
    assert stored.thought_log_channel_id is None


async def test_switches_refused_without_manage_server(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    async with running_bot(fake, bot) as run:
        option, resolved = channel_option(fake)
        for options, extra in (([sub("verbatim-tools", opt("enabled", True))], {}),
                               ([sub("member-keys", opt("required", True))], {}),
                               ([sub("thought-log-set", option)], {"resolved": resolved}),
                               ([sub("thought-log-clear")], {})):
            answer = await command(run, fake, "settings", *options, permissions=NO_PERMISSIONS, **extra)
            assert (answer.content, answer.ephemeral) == (REFUSED, True)
        stored = await server(bot, fake)
    assert not stored.verbatim_tool_calling_enabled and not stored.member_keys_required
    assert stored.thought_log_channel_id is None


async def test_status_shows_route_chain_and_masked_health(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory(DEFAULT_TEXT_PROVIDER="google", DEFAULT_TEXT_MODEL="gemini-env",
                      DEFAULT_TEXT_API_KEYS="AIza-env-secret-e4e4")
    dave = member(fake, "dave")
    async with running_bot(fake, bot) as run:
        plain = await command(run, fake, "status", user=dave, permissions=NO_PERMISSIONS)
        assert plain.ephemeral
        assert plain.content.splitlines() == [
            "**Your route**", "The bot's default (no server configuration):", "1. google / `gemini-env`"]
        form = await command(run, fake, "keys", sub("add", opt("provider", "anthropic")))
        await submit_modal(run, fake, form, "sk-ant-pool-5a5a")
        async with bot.sessions() as session, session.begin():
            await repo.set_text_model(session, int(fake.guild_id), "anthropic", "claude-s")
            await repo.add_fallback(session, int(fake.guild_id), "google", "gemini-f")
        managed = await command(run, fake, "status")
        assert managed.content.splitlines()[:4] == [
            "**Your route**", "This server's configuration:", "1. anthropic / `claude-s`",
            "2. google / `gemini-f`"]
        assert "**Server key pool**" in managed.content
        assert "anthropic `key-1` \u20265a5a: 0 ok, 0 errors (last: none), ready" in managed.content
        # the operator's environment keys are never shown to a server's managers
        assert "env-1" not in managed.content and "e4e4" not in managed.content
        # a member without Manage Server sees the route, never the pool
        member_view = await command(run, fake, "status", user=dave, permissions=NO_PERMISSIONS)
        assert "key pool" not in member_view.content and "\u20265a5a" not in member_view.content

        # BYOK: the server requires member keys and dave has none
        await command(run, fake, "settings", sub("member-keys", opt("required", True)))
        blocked = await command(run, fake, "status", user=dave, permissions=NO_PERMISSIONS, locale="ja")
        assert blocked.content.splitlines()[1] == (
            f"このサーバーでは自分のキーが必要です。{mention(fake, 'personal key set')} と "
            f"{mention(fake, 'personal model')} を使ってください。")
        form = await command(run, fake, "personal", group("key", sub("set")), user=dave, permissions=NO_PERMISSIONS)
        await submit_modal(run, fake, form, "sk-dave-00000-d4d4", user=dave, permissions=NO_PERMISSIONS)
        await command(run, fake, "personal", sub("model", opt("provider", "openai"), opt("model", "gpt-d")),
                      user=dave, permissions=NO_PERMISSIONS)
        own = await command(run, fake, "status", user=dave, permissions=NO_PERMISSIONS)
    assert own.content.splitlines() == [
        "**Your route**", "Your own key and model:", "1. openai / `gpt-d`", "**Your key**",
        "openai `personal` \u2026d4d4: 0 ok, 0 errors (last: none), ready"]
    everything = "\n".join(m.content for m in fake.messages.values())
    for secret in ("AIza-env-secret-e4e4", "sk-ant-pool-5a5a", "sk-dave-00000-d4d4"):
        assert secret not in everything
