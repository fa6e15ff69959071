"""The registry of answers in progress: nothing starts once shutdown began, and which
answer a message is part of is known while it streams and after it ended."""

from __future__ import annotations

from bot.load import answers as answers_module
from bot.load.answers import RunningAnswer, RunningAnswers
from stream.buffer import MessageDelivery
from tests.support.fake_clock import VirtualClock
from tests.support.fake_message_sink import MemorySink


async def test_no_answer_starts_once_shutdown_began():
    answers = RunningAnswers()
    running = answers.start(RunningAnswer(1, 2, 3, queued=True))
    assert running is not None and answers.of_member(2) == [running]
    left = await answers.close(grace=0.01)
    assert left == 1 and running.interrupt.reason == "shutdown"
    assert answers.start(RunningAnswer(1, 2, 4)) is None
    assert [a.question_id for a in answers.all()] == [3]


async def test_a_part_is_known_while_streaming_and_after_the_answer_ended(monkeypatch):
    clock = VirtualClock()
    answers = RunningAnswers()
    running = answers.start(RunningAnswer(channel_id=10, user_id=2, question_id=99))
    delivery = MessageDelivery(MemorySink(clock), clock=clock)
    running.shown.delivery = delivery
    assert answers.holding(5) is None
    delivery.append("first words")
    await clock.run(delivery.flush())  # the first message is on screen, the answer still streams
    [part] = [m.id for m in delivery.messages]
    assert answers.holding(part).message_ids == (part,)  # streaming: the parts so far
    answers.finish(running)
    assert answers.all() == []
    assert answers.holding(part).question_id == 99  # finished: from the recent records
    monkeypatch.setattr(answers_module, "MAX_RECENT", 1)
    bounded = RunningAnswers()
    for question in (1, 2):
        other = bounded.start(RunningAnswer(10, 2, question))
        other.shown.delivery = MessageDelivery(MemorySink(clock), clock=clock)
        other.shown.delivery.append("x")
        await clock.run(other.shown.delivery.flush())
        bounded.finish(other)
    assert len(bounded._recent.items) == 1  # bounded: the oldest record left first
