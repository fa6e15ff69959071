"""A member's next message while their answer here runs: part of the same question, or
a new question after it.

Pure: decided from the running answer and the clock. While none of the answer's text is
on screen — within the batch seconds of the member's previous message, or while the
answer still waits for a listen channel's gap — the message joins the question (one
question, in order; the running answer is dropped unseen and its limits count is kept).
Once text shows, the new question follows it: the interrupted question and the partial
answer go to the new history. An answer done again (Regenerate, Continue) is never joined.
"""

from __future__ import annotations

from bot.load.answers import RunningAnswer
from bot.question.context import Exchange, Question
from bot.question.history import speaker
from bot.repo.conversation import DEFAULT_BATCH_SECONDS


def batch_seconds(question: Question) -> float:
    """The server's batch window (a DM has the default)."""
    server = question.config.server
    if server is None or question.where.guild_id is None:
        return DEFAULT_BATCH_SECONDS
    return server.batch_seconds


def joins_the_batch(mine: RunningAnswer | None, now: float) -> bool:
    """Whether the asker's next message in the channel of their running answer `mine`
    belongs to its question even without a mention: none of the answer's text shows yet
    and it comes within the batch seconds ("@bot I have a question about the weather",
    then "in Lisbon, please"). Someone else's message never reaches here."""
    earlier = mine.question if mine is not None else None
    if mine is None or earlier is None or earlier.again is not None or mine.showed_text():
        return False
    window = batch_seconds(earlier)
    return 0 < window and now - mine.arrived <= window


def after(mine: RunningAnswer, question: Question, now: float) -> tuple[Question, bool]:
    """`question` after the member's running answer `mine` (`now`: loop time): the batch
    it joins, or itself following `mine`; and whether the batch was counted already."""
    earlier: Question | None = mine.question
    if earlier is None or earlier.again is not None:
        return question, False
    if not mine.showed_text():
        in_gap = question.listening is not None and mine.queued
        window = batch_seconds(question)
        if in_gap or 0 < window and now - mine.arrived <= window:
            return earlier.joined(question), mine.paid
        return question, False
    shown = mine.shown.delivery.text if mine.shown.delivery is not None else ""
    exchange = Exchange(earlier.prompt, speaker(earlier.message), shown, mine.record().message_ids)
    return question.follows_from(exchange), False
