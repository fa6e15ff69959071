"""`/personal ...` through the fake Discord: only the caller's rows ever change."""

from __future__ import annotations

from sqlalchemy import select

from bot.db.models import PersonalConfig
from tests.support.data_anthropic import a_text_block, anthropic_events
from tests.support.drive_commands import (
    NO_PERMISSIONS,
    command,
    discord_text,
    group,
    member,
    mention,
    opt,
    sub,
    submit_modal,
)
from tests.support.drive_discord_client import running_bot
from tests.support.fake_provider_server import Reply

ALICE_KEY = "sk-CANARY-alice-a11ce"
BOB_KEY = "sk-bob-000000-0b0b"


async def rows(bot) -> dict[tuple[int, int | None], PersonalConfig]:
    async with bot.sessions() as session:
        found = await session.scalars(select(PersonalConfig))
        return {(r.user_id, r.guild_id): r for r in found}


def snapshot(row: PersonalConfig) -> tuple:
    return (row.provider, row.model, bytes(row.encrypted_key or b""), row.last4,
            row.override_enabled, row.server_fallback_allowed)


async def test_personal_commands_touch_only_the_caller(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    alice, bob = member(fake, "alice2"), member(fake, "bob")
    gid = int(fake.guild_id)
    async with running_bot(fake, bot) as run:
        # Bob sets everything up first (no Manage Server needed for personal commands)
        form = await command(run, fake, "personal", group("key", sub("set")), user=bob, permissions=NO_PERMISSIONS)
        assert form.type == 9 and form.data["title"] == "Your API key"
        done = await submit_modal(run, fake, form, BOB_KEY, user=bob, permissions=NO_PERMISSIONS)
        assert done.content.splitlines()[0] == "Your key (\u20260b0b) is stored for this server." and done.ephemeral
        await command(run, fake, "personal", sub("model", opt("provider", "anthropic"), opt("model", "claude-b")),
                      user=bob, permissions=NO_PERMISSIONS)
        on = await command(run, fake, "personal", sub("override", opt("enabled", True)), user=bob,
                           permissions=NO_PERMISSIONS)
        assert on.content == "Your messages in this server now use your own key."
        bob_before = snapshot((await rows(bot))[(int(bob["id"]), gid)])

        # Alice configures a server-scoped and a global entry, then changes and removes things
        form = await command(run, fake, "personal", group("key", sub("set")), user=alice, permissions=NO_PERMISSIONS)
        await submit_modal(run, fake, form, ALICE_KEY, user=alice, permissions=NO_PERMISSIONS)
        form = await command(run, fake, "personal", group("key", sub("set", opt("scope", "global"))), user=alice,
                             permissions=NO_PERMISSIONS)
        glob = await submit_modal(run, fake, form, ALICE_KEY + "-g", user=alice, permissions=NO_PERMISSIONS)
        assert glob.content.splitlines()[0] == "Your key (\u2026ce-g) is stored for all servers."
        model = await command(run, fake, "personal", sub("model", opt("provider", "openai"), opt("model", "gpt-a")),
                              user=alice, permissions=NO_PERMISSIONS)
        assert model.content.splitlines() == ["Your model for this server: openai / `gpt-a`.",
                                               discord_text(fake, "commands.reply.personal_next_override", "en")]
        allow = await command(run, fake, "personal", sub("server-fallback", opt("allowed", True)), user=alice,
                              permissions=NO_PERMISSIONS)
        assert allow.content == "When your key fails in this server, the server's route may answer."
        removed = await command(run, fake, "personal", group("key", sub("clear")), user=alice, permissions=NO_PERMISSIONS)
        assert removed.content == "Your key for this server was deleted."
        again = await command(run, fake, "personal", group("key", sub("clear")), user=alice, permissions=NO_PERMISSIONS)
        assert again.content == "You have no stored key for this server."

        stored = await rows(bot)
    assert snapshot(stored[(int(bob["id"]), gid)]) == bob_before
    alice_here, alice_global = stored[(int(alice["id"]), gid)], stored[(int(alice["id"]), None)]
    assert (alice_here.encrypted_key, alice_here.model, alice_here.server_fallback_allowed) == (None, "gpt-a", True)
    assert alice_global.last4 == "ce-g" and alice_global.model is None
    assert set(stored) == {(int(bob["id"]), gid), (int(alice["id"]), gid), (int(alice["id"]), None)}


async def test_personal_refusals_are_localized_and_store_nothing(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    carol = member(fake, "carol")
    async with running_bot(fake, bot) as run:
        early = await command(run, fake, "personal", sub("override", opt("enabled", True)), user=carol,
                              permissions=NO_PERMISSIONS, locale="ja")
        assert early.content == discord_text(fake, "commands.error.personal_incomplete", "ja")
        assert early.content == (f"先にキーとモデルを設定してください（{mention(fake, 'personal key set')}、"
                                 f"{mention(fake, 'personal model')}）。")
        custom = await command(run, fake, "personal", sub("model", opt("provider", "custom"), opt("model", "m")),
                               user=carol, permissions=NO_PERMISSIONS)
        assert custom.content == "Custom endpoints can be set only by server managers."
        bad = await command(run, fake, "personal", sub("model", opt("provider", "nope"), opt("model", "m")),
                            user=carol, permissions=NO_PERMISSIONS)
        assert bad.content == "Unknown provider `nope`. Nothing was changed."
        form = await command(run, fake, "personal", group("key", sub("set")), user=carol, permissions=NO_PERMISSIONS)
        empty = await submit_modal(run, fake, form, "", user=carol, permissions=NO_PERMISSIONS)
        assert empty.content == "The key was empty. Nothing was stored."
        stored = await rows(bot)
    assert stored == {}  # every refusal rolled its transaction back


async def test_personal_commands_in_a_dm_use_the_global_scope(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory(DEFAULT_TEXT_PROVIDER="deepseek", DEFAULT_TEXT_MODEL="ds-env")
    frank = member(fake, "frank")
    async with running_bot(fake, bot) as run:
        before = await command(run, fake, "status", user=frank, dm=True)
        assert before.content.splitlines() == [
            "**Your route**", "The bot's default for direct messages:", "1. deepseek / `ds-env`"]
        here = await command(run, fake, "personal", group("key", sub("set", opt("scope", "server"))), user=frank, dm=True)
        assert here.content == "This command works only inside a server."
        form = await command(run, fake, "personal", group("key", sub("set")), user=frank, dm=True)
        done = await submit_modal(run, fake, form, "sk-frank-0000-f4f4", user=frank, dm=True)
        assert done.content.splitlines() == ["Your key (\u2026f4f4) is stored for all servers.",
                                          discord_text(fake, "commands.reply.personal_next_model", "en")]
        await command(run, fake, "personal", sub("model", opt("provider", "google"), opt("model", "g-f")),
                      user=frank, dm=True)
        await command(run, fake, "personal", sub("override", opt("enabled", True)), user=frank, dm=True)
        after = await command(run, fake, "status", user=frank, dm=True)
        # the global entry also routes frank's turns inside the server
        in_server = await command(run, fake, "status", user=frank, permissions=NO_PERMISSIONS)
        stored = await rows(bot)
    assert after.content.splitlines()[1:3] == ["Your own key and model:", "1. google / `g-f`"]
    assert in_server.content.splitlines()[1:3] == ["Your own key and model:", "1. google / `g-f`"]
    assert set(stored) == {(int(frank["id"]), None)}


async def test_the_key_form_stores_for_whoever_submits_it(fake_discord, bot_factory):
    """A form opened by one member and submitted by another stores the submitter's key only."""
    fake = fake_discord
    bot = bot_factory()
    opener, submitter = member(fake, "gina"), member(fake, "hal")
    async with running_bot(fake, bot) as run:
        form = await command(run, fake, "personal", group("key", sub("set")), user=opener, permissions=NO_PERMISSIONS)
        done = await submit_modal(run, fake, form, "sk-hal-000000-4a1a", user=submitter, permissions=NO_PERMISSIONS)
        stored = await rows(bot)
    assert done.content.splitlines()[0] == "Your key (\u20264a1a) is stored for this server."
    assert set(stored) == {(int(submitter["id"]), int(fake.guild_id))}
    assert stored[(int(submitter["id"]), int(fake.guild_id))].last4 == "4a1a"


async def test_a_dm_is_answered_on_the_members_own_key_and_model_with_no_further_step(
        fake_discord, bot_factory, provider_server, monkeypatch):
    """Before: after /personal key-set and /personal model a DM got the same advice again,
    and the missing step (/personal override) was named nowhere. A DM has no server route
    to override: each reply names the next step, and a complete route answers at once."""
    fake, server = fake_discord, provider_server
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.reply(Reply.named_sse(anthropic_events([a_text_block(0, ["On your own key."])], "end_turn", 4)))
    frank = member(fake, "frank")

    async def dm(text: str) -> str:
        asked = await fake.send_user_message(text, author=frank, dm=True)
        await fake.wait_for(lambda: any((m.message_reference or {}).get("message_id") == asked.id
                                        and "▌" not in m.content for m in fake.bot_messages(fake.dm_channel_id)))
        return next(m.content for m in fake.bot_messages(fake.dm_channel_id)
                    if (m.message_reference or {}).get("message_id") == asked.id)

    async with running_bot(fake, bot_factory()) as run:
        before = await command(run, fake, "status", user=frank, dm=True)
        form = await command(run, fake, "personal", group("key", sub("set")), user=frank, dm=True)
        keyed = await submit_modal(run, fake, form, "sk-ant-frank-0000-f4f4", user=frank, dm=True)
        lacking = await dm("hello?")
        chosen = await command(run, fake, "personal", sub("model", opt("provider", "anthropic"),
                                                          opt("model", "claude-sonnet-4-5")), user=frank, dm=True)
        answered = await dm("hello again")
        after = await command(run, fake, "status", user=frank, dm=True)
    assert before.content.splitlines()[1] == discord_text(fake, "commands.status.blocked_no_route_dm", "en")
    assert "manager" not in before.content
    assert keyed.content.splitlines() == ["Your key (\u2026f4f4) is stored for all servers.",
                                          discord_text(fake, "commands.reply.personal_next_model", "en")]
    assert lacking == discord_text(fake, "chat.personal_model_missing", "en")
    assert chosen.content.splitlines()[-1] == discord_text(fake, "commands.reply.personal_ready_dm", "en")
    assert answered == "On your own key."
    assert [r.api_key for r in server.requests] == ["sk-ant-frank-0000-f4f4"]
    assert after.content.splitlines()[1:3] == ["Your own key and model:", "1. anthropic / `claude-sonnet-4-5`"]
