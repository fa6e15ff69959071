"""What each write is decides the buttons, not its content; sends and edits build no `discord.Message`.

Through the real discord.py client against the fake Discord (tests/support)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import discord
import pytest

from bot.capabilities.answer_controls.buttons import AnswerControls
from bot.edge.sink import DiscordMessageSink
from stream.buffer import STREAMING_INDICATOR
from stream.sink import FINAL, INTERIM, INTERIM_EDIT, Ending, MessageGone, Write
from tests.capabilities.answer_controls.test_answer_buttons_sink import (
    ASKER,
    QUESTION,
    Recorder,
    _channel,
)
from tests.support.drive_discord_client import running_bot
from tests.support.fake_discord_server import FakeDiscord

STOP = [f"ans:stop:{ASKER}:{QUESTION}"]
FINAL_BUTTONS = [f"ans:{a}:{ASKER}:{QUESTION}" for a in ("regen", "cont", "why")]


@pytest.fixture
def built_messages(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The ids of every `discord.Message` discord.py builds while the test runs."""
    built: list[int] = []
    original = discord.Message.__init__

    def counting(self: discord.Message, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        built.append(self.id)

    monkeypatch.setattr(discord.Message, "__init__", counting)
    yield built


async def test_the_write_not_the_indicator_says_which_buttons_a_message_shows() -> None:
    async with FakeDiscord() as fake, running_bot(fake, Recorder()) as run:
        channel, trigger = await _channel(fake, run)
        sink = DiscordMessageSink(channel, reply_to=trigger, client=run.bot,
                                  controls=AnswerControls(ASKER, QUESTION, "en"))
        sent = await sink.send("Streaming without the indicator", reply=True, write=INTERIM)
        shown = [fake.messages[str(sent.id)].custom_ids]
        await sink.edit(sent, "Final text that ends like streaming" + STREAMING_INDICATOR, write=FINAL)
        shown.append(fake.messages[str(sent.id)].custom_ids)
        await sink.edit(sent, "Streaming again", write=INTERIM_EDIT)
        shown.append(fake.messages[str(sent.id)].custom_ids)
        await sink.edit(sent, "The answer.", write=Write.closing(Ending("length", reasoning=True)))
        shown.append(fake.messages[str(sent.id)].custom_ids)
        await sink.edit(sent, "The answer.\n\n*a note*", write=Write.closing(None))
        shown.append(fake.messages[str(sent.id)].custom_ids)
    # Stop only on interim writes; a final write removes it whatever its text ends with;
    # the final buttons only on the closing write with an Ending; one without leaves them.
    assert shown == [STOP, [], STOP, FINAL_BUTTONS, FINAL_BUTTONS]


async def test_only_an_edit_that_may_be_skipped_may_be_refused() -> None:
    """An interim edit a newer one replaces travels at the interim priority: with the
    global budget all taken, it is refused (`SinkBusy`); an interim send is not."""
    from bot.edge.budget import GlobalBudget, Priority
    from bot.load.observability import discord_http_trace
    from stream.sink import SinkBusy

    budget = GlobalBudget(rate=2)
    async with (FakeDiscord() as fake,
                running_bot(fake, Recorder(http_trace=discord_http_trace(budget))) as run):
        channel, trigger = await _channel(fake, run)
        sink = DiscordMessageSink(channel, reply_to=trigger, client=run.bot, typing=True)
        sent = await sink.send("Streaming" + STREAMING_INDICATOR, reply=True, write=INTERIM)
        for _ in range(3):
            await budget.acquire(Priority.URGENT)  # the window is full now
        with pytest.raises(SinkBusy):
            await sink.edit(sent, "Streaming more" + STREAMING_INDICATOR, write=INTERIM_EDIT)
        await sink.edit(sent, "Streaming more", write=Write.closing(None))  # waits for budget instead
        sink.close()
    assert fake.messages[str(sent.id)].history[-1] == "Streaming more"


async def test_sends_and_edits_build_no_message(built_messages: list[int]) -> None:
    async with FakeDiscord() as fake, running_bot(fake, Recorder()) as run:
        channel, trigger = await _channel(fake, run)
        assert trigger.id in built_messages  # the wrapper sees what discord.py builds (the gateway's)
        before = len(built_messages)
        sink = DiscordMessageSink(channel, reply_to=trigger, client=run.bot,
                                  controls=AnswerControls(ASKER, QUESTION, "en"))
        sent = await sink.send("One" + STREAMING_INDICATOR, reply=True, write=INTERIM)
        assert built_messages[before:] == []  # a send reads only the new message's id
        await sink.edit(sent, "One two" + STREAMING_INDICATOR, write=INTERIM_EDIT)
        await sink.edit(sent, "One two <@456> @everyone", write=FINAL)
        await sink.edit(sent, "One two three.", write=Write.closing(Ending("length", reasoning=False)))
        edits_built = built_messages[before:]
        await fake.delete_message(sent.id)  # deleted in Discord: the edit's 404 is still MessageGone
        with pytest.raises(MessageGone):
            await sink.edit(sent, "gone", write=FINAL)
    assert edits_built == []
    patches = [r.body for r in fake.requests if r.method == "PATCH"]
    assert [body["content"] for body in patches] == [
        "One two" + STREAMING_INDICATOR, "One two <@456> @everyone", "One two three.", "gone"]
    for body in patches:  # every edit forbids every ping
        mentions = body["allowed_mentions"]
        assert mentions["parse"] == [] and not mentions.get("users") and not mentions.get("roles")
    assert "components" not in patches[0]  # Stop shown already: the interim edit carries text only
    assert patches[1]["components"] == []
    assert [c["custom_id"] for row in patches[2]["components"] for c in row["components"]] == [
        f"ans:{a}:{ASKER}:{QUESTION}" for a in ("regen", "cont")]  # cut by its cap, no reasoning
