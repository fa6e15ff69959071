"""An answer's buttons through the real discord.py client against the fake Discord: Stop
rides on the streaming sends and edits of the newest part, the final buttons on the last
message's final edit, at no extra request; a press reaches the bot as `answer_control`
and its interaction requests take no slot of the global budget."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import discord
import pytest

from bot.capabilities.answer_controls.buttons import TEMPLATE, AnswerButton, AnswerControls, Press
from bot.edge.budget import Departure, GlobalBudget, Priority
from bot.edge.sink import DiscordMessageSink
from bot.load.observability import discord_http_trace
from providers.i18n import t
from providers.types import ProcessedChunk, ThoughtLogEntry
from stream.buffer import STREAMING_INDICATOR, MessageDelivery
from stream.limits import StreamLimits
from stream.orchestrator import run_stream
from stream.pacing import EditBudget
from stream.sink import INTERIM, Ending, Write
from tests.support.drive_discord_client import RunningBot, fast_ready_kwargs, running_bot
from tests.support.fake_discord_server import FakeDiscord, RequestRecord

ASKER, QUESTION = 4242, 9001
LIMIT = 300  # a small message size: the answer splits into several parts quickly
UNBOUNDED = StreamLimits(first_content_seconds=1e9, idle_seconds=1e9, total_seconds=1e9)
PARAGRAPHS = [f"Paragraph {i}: " + "words follow words here. " * 5 for i in range(7)]


class Recorder(discord.Client):
    """Keeps the members' messages and the answer-button presses it is handed."""

    def __init__(self, **options: Any) -> None:
        intents = discord.Intents.default()
        intents.message_content = True
        super().__init__(intents=intents, **fast_ready_kwargs(), **options)
        self.seen: list[discord.Message] = []
        self.presses: list[Press] = []

    async def setup_hook(self) -> None:
        self.add_dynamic_items(AnswerButton)  # once: every answer's buttons, after restarts too

    async def on_message(self, message: discord.Message) -> None:
        if not message.author.bot:
            self.seen.append(message)

    async def on_answer_control(self, interaction: discord.Interaction, press: Press) -> None:
        self.presses.append(press)
        await interaction.response.defer()
        await interaction.followup.send("noted", ephemeral=True)


async def _channel(fake: FakeDiscord, run: RunningBot) -> tuple[discord.abc.Messageable, discord.Message]:
    client = run.bot
    assert isinstance(client, Recorder)
    await fake.send_user_message("question")
    await run.wait_for(lambda: len(client.seen) == 1)
    trigger = client.seen[0]
    return trigger.channel, trigger


def _writes(records: list[RequestRecord]) -> list[RequestRecord]:
    return [r for r in records if r.method in ("POST", "PATCH") and "/messages" in r.path]


def _ids(body: dict[str, Any]) -> list[str]:
    return [c["custom_id"] for row in body.get("components", []) for c in row["components"]]


def _target(record: RequestRecord, fake: FakeDiscord, among: list[str]) -> str:
    """The message (one of `among`) a write made or changed."""
    if record.method == "PATCH":
        return record.path.rsplit("/", 1)[1]
    return next(i for i in among if fake.messages[i].history[0] == record.body["content"])


async def _flush_driven(sink: DiscordMessageSink, ending: Ending) -> MessageDelivery:
    """The same answer, fed and flushed in fixed steps (so both runs make the same requests)."""
    delivery = MessageDelivery(sink, limit=LIMIT, budget=EditBudget(limit=50, window=1.0))
    for paragraph in PARAGRAPHS:
        delivery.append(paragraph + "\n\n")
        await delivery.flush()
    await delivery.finish(ending=ending)
    return delivery


async def test_buttons_ride_on_the_deliverys_own_requests() -> None:
    ending = Ending("length", reasoning=True)
    async with (FakeDiscord(message_limit=50, message_window=1.0) as fake,
                running_bot(fake, Recorder()) as run):
        channel, trigger = await _channel(fake, run)
        start = len(fake.requests)
        plain = await _flush_driven(DiscordMessageSink(channel, reply_to=trigger, client=run.bot), ending)
        middle = len(fake.requests)
        controls = AnswerControls(ASKER, QUESTION, "en")
        sink = DiscordMessageSink(channel, reply_to=trigger, client=run.bot, controls=controls)
        answered = await _flush_driven(sink, ending)
        without, with_buttons = fake.requests[start:middle], fake.requests[middle:]
    assert len(answered.messages) == len(plain.messages) >= 3
    # No extra request: the buttons were carried by the sends and edits made anyway.
    assert [(r.method, r.path.count("/")) for r in with_buttons] == [(r.method, r.path.count("/")) for r in without]
    assert all("components" not in r.body or r.body["components"] == [] for r in _writes(without))
    stop = f"ans:stop:{ASKER}:{QUESTION}"
    final = [f"ans:{a}:{ASKER}:{QUESTION}" for a in ("regen", "cont", "why")]
    latest: dict[str, list[str]] = {}
    among = [str(m.id) for m in answered.messages]
    for record in _writes(with_buttons):
        ids = _ids(record.body)
        if record.body["content"].endswith(STREAMING_INDICATOR):  # streaming: Stop, sent once per part
            assert "components" not in record.body or ids == [stop]
        if "components" in record.body:  # an interim edit of a part showing Stop already carries text only
            latest[_target(record, fake, among)] = ids
    for part in among:  # every streaming version of every part showed Stop
        stored = fake.messages[part]
        streaming = [v for v, text in enumerate(stored.history) if text.endswith(STREAMING_INDICATOR)]
        assert streaming and all(stored.custom_ids_at(v) == [stop] for v in streaming)
    last = str(answered.messages[-1].id)
    assert latest.pop(last) == final  # the last message's final edit: Regenerate, Continue, Reasoning
    assert set(map(str, (m.id for m in answered.messages[:-1]))) == set(latest)
    assert all(ids == [] for ids in latest.values())  # earlier parts: Stop removed by their final edit
    # What Discord shows now: the buttons on the last message only.
    assert fake.messages[last].custom_ids == final
    assert all(fake.messages[i].custom_ids == [] for i in latest)
    labels = [c["label"] for row in _writes(with_buttons)[-1].body["components"] for c in row["components"]]
    assert labels == [t(k, "en") for k in ("chat.controls.regenerate", "chat.controls.continue",
                                            "chat.controls.reasoning")]


async def test_a_streamed_answer_shows_stop_only_on_its_newest_part() -> None:
    async def chunks():
        yield ProcessedChunk(type="text", content="", thoughts=[ThoughtLogEntry("raw", "hmm", "openai")])
        for paragraph in PARAGRAPHS:
            yield ProcessedChunk(type="text", content=paragraph + "\n\n")
            await asyncio.sleep(0.02)
        yield ProcessedChunk(type="done", finish_reason="stop")

    async with (FakeDiscord(message_limit=50, message_window=1.0) as fake,
                running_bot(fake, Recorder()) as run):
        channel, trigger = await _channel(fake, run)
        start = len(fake.requests)
        sink = DiscordMessageSink(channel, reply_to=trigger, client=run.bot,
                                  controls=AnswerControls(ASKER, QUESTION, "ja"))
        delivery = MessageDelivery(sink, limit=LIMIT, budget=EditBudget(limit=50, window=1.0))
        result = await run_stream(chunks(), delivery, limits=UNBOUNDED)
        records = _writes(fake.requests[start:])
    assert result.status == "completed" and len(result.messages) >= 3
    order = [str(m.id) for m in result.messages]
    with_stop: list[str] = []
    for record in records:
        target = _target(record, fake, order)
        if _ids(record.body) == [f"ans:stop:{ASKER}:{QUESTION}"]:
            # Stop only goes on the newest part: never back on an earlier one.
            assert not with_stop or order.index(target) >= order.index(with_stop[-1])
            with_stop.append(target)
    assert with_stop[-1] == order[-1] and set(with_stop) == set(order)
    stop = f"ans:stop:{ASKER}:{QUESTION}"
    for part in order:  # every part showed Stop while it was the newest
        stored = fake.messages[part]
        versions = [stored.custom_ids_at(v) for v in range(len(stored.component_history))] + [stored.custom_ids]
        assert [stop] in versions
    assert [fake.messages[p].custom_ids for p in order[:-1]] == [[]] * (len(order) - 1)
    final = records[-1]
    assert _target(final, fake, order) == order[-1]
    assert _ids(final.body) == [f"ans:regen:{ASKER}:{QUESTION}", f"ans:why:{ASKER}:{QUESTION}"]
    assert [c["label"] for c in final.body["components"][0]["components"]] == [
        t("chat.controls.regenerate", "ja"), t("chat.controls.reasoning", "ja")]


async def test_a_note_after_the_end_leaves_the_buttons_alone_and_views_are_never_stored() -> None:
    async with (FakeDiscord(message_limit=50, message_window=1.0) as fake,
                running_bot(fake, Recorder()) as run):
        channel, trigger = await _channel(fake, run)
        sink = DiscordMessageSink(channel, reply_to=trigger, client=run.bot,
                                  controls=AnswerControls(ASKER, QUESTION, "en"))
        delivery = MessageDelivery(sink, budget=EditBudget(limit=50, window=1.0))
        start = len(fake.requests)
        delivery.append("Short.")
        await delivery.flush()
        await delivery.finish()  # no Ending known here: the buttons are left as they are
        records = _writes(fake.requests[start:])
        state = run.bot._connection  # read only: what discord.py keeps per message
        stored = state._view_store.persistent_views, state._view_store._synced_message_views
    assert _ids(records[0].body) == [f"ans:stop:{ASKER}:{QUESTION}"]
    assert records[-1].body["content"] == "Short." and "components" not in records[-1].body
    assert fake.messages[str(delivery.messages[0].id)].custom_ids == [f"ans:stop:{ASKER}:{QUESTION}"]
    assert stored == ([], {})


class CountingBudget(GlobalBudget):
    """The process's budget, counting the slots requests take."""

    def __init__(self, rate: float) -> None:
        super().__init__(rate)
        self.taken = 0

    async def acquire(self, priority: Priority) -> Departure:
        self.taken += 1
        return await super().acquire(priority)


async def test_a_press_reaches_the_bot_and_its_interaction_requests_take_no_budget_slot() -> None:
    budget = CountingBudget(rate=2)  # a tight budget: a request that waited for it would show
    async with (FakeDiscord(message_limit=50, message_window=1.0) as fake,
                running_bot(fake, Recorder(http_trace=discord_http_trace(budget))) as run):
        channel, trigger = await _channel(fake, run)
        sink = DiscordMessageSink(channel, reply_to=trigger, client=run.bot,
                                  controls=AnswerControls(ASKER, QUESTION, "en"))
        sent = await sink.send("Answer." + STREAMING_INDICATOR, reply=True, write=INTERIM)
        for _ in range(3):
            await budget.acquire(Priority.URGENT)  # the window is full now
        taken, start, counted = budget.taken, len(fake.requests), fake.global_counted
        loop = asyncio.get_running_loop()
        began = loop.time()
        await fake.press(sent.id, f"ans:stop:{ASKER}:{QUESTION}")
        client = run.bot
        assert isinstance(client, Recorder)
        await run.wait_for(lambda: len(fake.requests) - start >= 2 and bool(client.presses))
        waited = loop.time() - began
        global_counted, taken_by_press = fake.global_counted - counted, budget.taken - taken
        await sink.edit(sent, "Answer.", write=Write.closing(Ending("length", reasoning=False)))
        taken = budget.taken
        await fake.press(sent.id, f"ans:cont:{ASKER}:{QUESTION}")  # the final buttons work the same way
        await run.wait_for(lambda: len(client.presses) == 2)
        await run.wait_for(lambda: sum("/webhooks/" in r.path for r in fake.requests[start:]) == 2)
        taken_by_press += budget.taken - taken
    assert client.presses == [Press("stop", ASKER, QUESTION), Press("cont", ASKER, QUESTION)]
    assert global_counted == 0  # Discord counts neither against the global limit
    paths = [r.path for r in fake.requests[start:]]
    assert any("/interactions/" in p and p.endswith("/callback") for p in paths)
    assert any(p.startswith(f"/webhooks/{fake.application_id}/") for p in paths)
    assert taken_by_press == 0  # neither the callbacks nor the follow-ups took a slot
    assert waited < 0.4  # and neither waited for the full window


@pytest.mark.parametrize("custom_id, press", [
    ("ans:regen:1:2", Press("regen", 1, 2)),
    ("ans:cont:123456789012345678:987654321098765432", Press("cont", 123456789012345678, 987654321098765432)),
    ("ans:why:7:8", Press("why", 7, 8)),
    ("ans:nope:1:2", None), ("ans:stop:x:2", None), ("ans:stop:1:2:3", None), ("other", None),
])
async def test_custom_ids_parse_back_to_their_press(custom_id: str, press: Press | None) -> None:
    """As discord.py dispatches a press: the registered template matches the whole custom
    id, then `from_custom_id` makes the item (the interaction is not read)."""
    match = re.fullmatch(TEMPLATE, custom_id)
    assert (match is None) is (press is None)
    if press is not None:
        item = await AnswerButton.from_custom_id(None, discord.ui.Button(label="", custom_id=custom_id), match)
        assert item.press == press
        assert press.custom_id == custom_id and len(custom_id) <= 100


def test_final_views_follow_the_ending_and_are_built_once() -> None:
    controls = AnswerControls(1, 2, "en")
    plain, cut, reasoned = (controls.final(Ending(f, r)) for f, r in (("stop", False), ("length", False),
                                                                      ("stop", True)))
    assert plain is not None and cut is not None and reasoned is not None
    assert [_ids({"components": v.to_components()}) for v in (plain, cut, reasoned)] == [
        ["ans:regen:1:2"], ["ans:regen:1:2", "ans:cont:1:2"], ["ans:regen:1:2", "ans:why:1:2"]]
    assert controls.final(Ending("stop", False, interrupted="stop")) is plain
    assert not plain.is_dispatchable() and not controls.stop.is_dispatchable()
