"""What answer buttons read after a restart, on SQLite and PostgreSQL: a row is an upsert
that keeps the answer's age and what it continued; a plain answer has no row and its
facts come from its parts; a newer answer that continued one is found; a regenerated
answer's deleted parts are forgotten."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.repo.answer_records import (
    AnswerFacts,
    answer_facts,
    forget_parts,
    has_newer,
    record_answer_facts,
)
from bot.repo.conversation import RecordedAnswer, answer_of, record_answers
from providers.types import Source

GUILD, CHANNEL, ASKER = 7070, 7071, 7072


async def test_a_row_is_rewritten_but_keeps_its_age_and_what_it_continued(sessions) -> None:
    old = datetime.now(UTC) - timedelta(hours=3)
    cut = AnswerFacts(900, CHANNEL, GUILD, ASKER, (801, 802), continues_id=500, finish_reason="length",
                      reasoning="because", created_at=old)
    async with sessions() as session, session.begin():
        await record_answers(session, [RecordedAnswer(802, CHANNEL, (900, 901))])
        await record_answer_facts(session, [cut])
    again = AnswerFacts(900, CHANNEL, GUILD, ASKER, (801, 802), continues_id=None, finish_reason="stop")
    async with sessions() as session, session.begin():
        await record_answer_facts(session, [again])
    async with sessions() as session:
        facts = await answer_facts(session, RecordedAnswer(802, CHANNEL, (900, 901)), ASKER, GUILD)
        assert facts is not None
        assert (facts.finish_reason, facts.reasoning, facts.question_ids) == ("stop", None, (801, 802))
        assert facts.continues_id == 500 and abs((facts.created_at - old).total_seconds()) < 1
        assert await has_newer(session, 500) and not await has_newer(session, 900)


async def test_a_plain_answer_has_no_row_and_its_facts_come_from_its_parts(sessions) -> None:
    plain = AnswerFacts(950, CHANNEL, GUILD, ASKER, (940,))
    assert not plain.needs_row
    assert AnswerFacts(950, CHANNEL, GUILD, ASKER, (939, 940)).needs_row  # a batch
    assert AnswerFacts(950, CHANNEL, GUILD, ASKER, (940,), reasoning="x").needs_row
    async with sessions() as session, session.begin():
        await record_answers(session, [RecordedAnswer(940, CHANNEL, (950, 951, 952))])
    async with sessions() as session:
        facts = await answer_facts(session, RecordedAnswer(940, CHANNEL, (950, 951, 952)), ASKER, GUILD)
        assert facts is not None and facts.question_ids == (940,) and facts.asker_id == ASKER
        assert datetime.now(UTC) - facts.created_at < timedelta(minutes=5)
        assert await answer_facts(session, RecordedAnswer(1, CHANNEL, (2,)), ASKER, GUILD) is None
    async with sessions() as session, session.begin():
        await forget_parts(session, [951, 952])
    async with sessions() as session:
        assert (await answer_of(session, 950)).message_ids == (950,)
        assert await answer_of(session, 951) is None


async def test_an_answers_sources_come_back_in_order_with_their_titles(sessions) -> None:
    sources = (Source("https://a.example/x", "A\tpage\nwith breaks"), Source("https://b.example/"),
               Source("https://c.example/?q=1", "C"))
    facts = AnswerFacts(990, CHANNEL, GUILD, ASKER, (980,), sources=sources)
    assert facts.needs_row
    async with sessions() as session, session.begin():
        await record_answers(session, [RecordedAnswer(980, CHANNEL, (990,))])
        await record_answer_facts(session, [facts])
    async with sessions() as session:
        read = await answer_facts(session, RecordedAnswer(980, CHANNEL, (990,)), ASKER, GUILD)
    assert read is not None
    assert read.sources == (Source("https://a.example/x", "A page with breaks"), Source("https://b.example/"),
                            Source("https://c.example/?q=1", "C"))
