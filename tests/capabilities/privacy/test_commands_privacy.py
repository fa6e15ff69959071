"""`/privacy export` and `/privacy erase` through the real bot on the fake Discord (a real
SQLite file): the file holds the member's data and nobody else's with keys masked, is cut
at its bound, once a minute; the erasure runs only on the asker's Erase press, takes
every row of theirs (today's limit counters and a manager's block excepted) and nobody
else's, and their next question sees no personal route."""

from __future__ import annotations

import json

from bot.capabilities.privacy.export_file import BOUND
from bot.repo.common import ensure_server
from tests.capabilities.privacy.member_rows import AFTER_ERASE, SEEDED, counts, seed
from tests.support.data_anthropic import a_text_block, anthropic_events
from tests.support.drive_commands import (
    NO_PERMISSIONS,
    command,
    discord_text,
    group,
    member,
    sub,
    submit_modal,
)
from tests.support.drive_discord_client import running_bot
from tests.support.fake_provider_server import Reply

ALICE_KEY, BOB_KEY = "sk-ALICE-full-secret-a1c3", "sk-BOB-full-secret-b0b5"


async def seeded(bot, fake, *people, **options):
    """`seed` for each member (a dict from `member`), in the fake's server."""
    found = []
    async with bot.sessions() as session, session.begin():
        await ensure_server(session, int(fake.guild_id))
        for person, key in people:
            found.append(await seed(session, bot.vault, int(person["id"]), int(fake.guild_id), key, **options))
    return found


async def rows_of(bot, *members):
    async with bot.sessions() as session:
        return [await counts(session, one) for one in members]


def export_of(fake, user) -> tuple[bytes, object]:
    """The newest export file sent to `user`, and the message it came with."""
    name = f"privacy-{user['id']}.json"
    message = [m for m in fake.messages.values() if name in m.files][-1]
    return message.files[name], message


def question_of(fake, text: str):
    """The newest erase question (its buttons still on it, or gone)."""
    return [m for m in fake.messages.values() if m.content == text][-1]


def button(message, label: str) -> str:
    return next(b["custom_id"] for b in message.buttons() if b["label"] == label)


async def privacy(run, fake, verb: str, user, **kwargs):
    return await command(run, fake, "privacy", sub(verb), user=user, permissions=NO_PERMISSIONS, **kwargs)


async def test_export_holds_the_members_data_masked_and_only_theirs(fake_discord, bot_factory):
    fake, bot = fake_discord, bot_factory()
    alice, bob = member(fake, "alice"), member(fake, "bob")
    async with running_bot(fake, bot) as run:
        await seeded(bot, fake, (alice, ALICE_KEY), (bob, BOB_KEY))
        said = await privacy(run, fake, "export", alice)
        data, message = export_of(fake, alice)
        again = await privacy(run, fake, "export", alice, locale="ja")
        bobs = await privacy(run, fake, "export", bob)  # the minute is each member's own
    assert said.ephemeral and message.flags & 64
    assert said.content == discord_text(fake, "commands.reply.privacy_exported")
    assert again.content.startswith("1分以内に書き出したばかりです。") and again.ephemeral
    assert bobs.content == said.content
    assert ALICE_KEY.encode() not in data and b"ALICE-full" not in data
    assert BOB_KEY.encode() not in data and bob["id"].encode() not in data
    read = json.loads(data)
    header = read["header"]
    assert header["user_id"] == alice["id"] and header["kept_on_erase"] == ["blocked_by_servers"]
    assert header["what"].startswith("Everything this bot keeps about one Discord user")
    assert header["sections"] == ["personal_settings", "usage_days", "message_hours", "search_days", "answers",
                                  "memories", "reminders", "image_days", "voice_transcripts",
                                  "blocked_by_servers"]
    assert {name: len(read[name]) for name in header["sections"]} == {
        "personal_settings": 2, "usage_days": 3, "message_hours": 2, "search_days": 2, "answers": 2,
        "memories": 3, "reminders": 2, "image_days": 2,
        "voice_transcripts": 1, "blocked_by_servers": 1}
    assert sorted(r["key"] for r in read["personal_settings"]) == ["\u2026a1c3", "\u2026obal"]


async def test_a_file_over_its_bound_is_cut_and_says_so(fake_discord, bot_factory):
    fake, bot = fake_discord, bot_factory()
    carol = member(fake, "carol")
    async with running_bot(fake, bot) as run:
        await seeded(bot, fake, (carol, "sk-carol-0000-c4c4"), reasoning="r" * 200_000, answers=7)
        said = await privacy(run, fake, "export", carol)
        data, _ = export_of(fake, carol)
    read = json.loads(data)
    assert len(data) <= BOUND and read["header"]["left_out"] == {"answers": 2}
    assert len(read["answers"]) == 5 and len(read["personal_settings"]) == 2  # later sections still whole
    assert said.content.splitlines() == [
        discord_text(fake, "commands.reply.privacy_exported"),
        "The file was cut at 1 MiB; its header says what was left out:",
        "`answers`: the newest 2 row(s) left out"]


async def test_erase_takes_the_askers_rows_only_after_their_own_press(fake_discord, bot_factory):
    fake, bot = fake_discord, bot_factory()
    alice, bob = member(fake, "alice"), member(fake, "bob")
    async with running_bot(fake, bot) as run:
        mine, bobs = await seeded(bot, fake, (alice, ALICE_KEY), (bob, BOB_KEY))
        question_text = discord_text(fake, "commands.reply.privacy_erase_confirm")

        # Cancel erases nothing and takes the buttons away
        await privacy(run, fake, "erase", alice)
        cancelled = question_of(fake, question_text)
        await fake.press(cancelled.id, button(cancelled, "Cancel"), user=alice)
        await run.wait_for(lambda: cancelled.content == "Nothing was erased." and not cancelled.buttons())
        assert await rows_of(bot, mine, bobs) == [SEEDED, SEEDED]

        # another member's press is refused (to them alone) and erases nothing
        said = await privacy(run, fake, "erase", alice)
        question = question_of(fake, question_text)
        assert said.ephemeral and [b["label"] for b in question.buttons()] == ["Erase", "Cancel"]
        press = await fake.press(question.id, button(question, "Erase"), user=bob)
        await run.wait_for(lambda: any(m.webhook_token == press["token"] for m in fake.messages.values()))
        refused = next(m for m in fake.messages.values() if m.webhook_token == press["token"])
        assert refused.content == "Only the member who asked can answer this." and refused.flags & 64
        assert await rows_of(bot, mine, bobs) == [SEEDED, SEEDED]

        # the asker's Erase takes their rows, in one transaction, and says what went
        await fake.press(question.id, button(question, "Erase"), user=alice)
        await run.wait_for(lambda: question.content.startswith("Erased:"))
        after = await rows_of(bot, mine, bobs)
    assert after == [AFTER_ERASE, SEEDED]
    assert not question.buttons()
    assert question.content.splitlines() == [
        "Erased:", "`personal_settings`: 2 row(s)", "`usage_days`: 2 row(s)", "`message_hours`: 1 row(s)",
        "`search_days`: 1 row(s)", "`answers`: 6 row(s)", "`memories`: 3 row(s)", "`reminders`: 2 row(s)",
        "`image_days`: 1 row(s)", "`voice_transcripts`: 1 row(s)",
        discord_text(fake, "commands.reply.privacy_erase_kept")]


async def test_an_unanswered_question_expires_and_erases_nothing(fake_discord, bot_factory):
    fake, bot = fake_discord, bot_factory()
    dora = member(fake, "dora")
    async with running_bot(fake, bot) as run:
        [mine] = await seeded(bot, fake, (dora, "sk-dora-0000-d0d0"))
        bot.get_cog("PrivacyCog").confirm_seconds = 0.3
        await privacy(run, fake, "erase", dora, locale="ja")
        question = question_of(fake, discord_text(fake, "commands.reply.privacy_erase_confirm", "ja"))
        assert [b["label"] for b in question.buttons()] == ["消去", "キャンセル"]
        await run.wait_for(lambda: not question.buttons())
        [after] = await rows_of(bot, mine)
    assert question.content == "1分以内に応答がなかったため、何も消去していません。"
    assert after == SEEDED


async def test_in_a_dm_the_erased_members_next_question_has_no_own_route(
        fake_discord, bot_factory, provider_server, monkeypatch):
    """Export and erase in a DM; the erasure drops the cached personal route at once."""
    fake, server = fake_discord, provider_server
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.reply(Reply.named_sse(anthropic_events([a_text_block(0, ["On your own key."])], "end_turn", 4)))
    frank = member(fake, "frank")

    async def dm(text: str) -> str:
        asked = await fake.send_user_message(text, author=frank, dm=True)
        await fake.wait_for(lambda: any((m.message_reference or {}).get("message_id") == asked.id
                                        and "\u258c" not in m.content for m in fake.bot_messages(fake.dm_channel_id)))
        return next(m.content for m in fake.bot_messages(fake.dm_channel_id)
                    if (m.message_reference or {}).get("message_id") == asked.id)

    async with running_bot(fake, bot_factory()) as run:
        form = await command(run, fake, "personal", group("key", sub("set")), user=frank, dm=True)
        await submit_modal(run, fake, form, "sk-ant-frank-0000-f4f4", user=frank, dm=True)
        await command(run, fake, "personal", sub("model", {"type": 3, "name": "provider", "value": "anthropic"},
                                                 {"type": 3, "name": "model", "value": "claude-sonnet-4-5"}),
                      user=frank, dm=True)
        answered = await dm("hello")
        exported = await privacy(run, fake, "export", frank, dm=True)
        data, _ = export_of(fake, frank)
        await privacy(run, fake, "erase", frank, dm=True)
        question = question_of(fake, discord_text(fake, "commands.reply.privacy_erase_confirm"))
        await fake.press(question.id, button(question, "Erase"), user=frank)
        await run.wait_for(lambda: question.content.startswith("Erased:"))
        unanswered = await dm("hello again")
    assert answered == "On your own key." and exported.ephemeral
    assert b"sk-ant-frank" not in data and json.loads(data)["personal_settings"][0]["key"] == "\u2026f4f4"
    assert "`personal_settings`: 1 row(s)" in question.content.splitlines()
    assert [r.api_key for r in server.requests] == ["sk-ant-frank-0000-f4f4"]  # nothing asked on it since
    assert unanswered == discord_text(fake, "chat.not_configured_dm")
