"""A provider's own searches are counted with the batched writes: a member's searches of
one day add up while they wait and go in one statement, never on the answer's path; and
only where a limit applies."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select

from bot.capabilities.web_search.counting import searches_counted
from bot.db.engine import session_factory
from bot.db.models import SearchDay
from bot.load.write_behind import WriteBehind
from bot.repo.common import ensure_server
from bot.repo.usage import Limits
from bot.usage.limits import searches_left
from tests.config.test_write_behind import statements

GUILD, ALICE = 31, 41
NOW = datetime(2026, 12, 6, 12, tzinfo=UTC)
FIVE_A_DAY = Limits(searches_per_day=5)


async def test_searches_of_one_day_add_up_and_cap_the_next_request(engine) -> None:
    sessions = session_factory(engine)
    async with sessions() as session, session.begin():
        await ensure_server(session, GUILD)
    writes = WriteBehind(sessions, interval=60)  # only `close` flushes here
    for count in (2, 1):
        writes.put(searches_counted(GUILD, ALICE, FIVE_A_DAY, "server", count, NOW))
    assert len(writes) == 1
    assert await searches_left(sessions, GUILD, ALICE, FIVE_A_DAY, "server", NOW) == 5  # queued, not yet written
    sent = statements(engine)
    assert await writes.close() == 0
    assert sent == ["INSERT"]
    async with sessions() as session:
        row = (await session.scalars(select(SearchDay))).one()
    assert (row.guild_id, row.user_id, row.searches) == (GUILD, ALICE, 3)
    assert await searches_left(sessions, GUILD, ALICE, FIVE_A_DAY, "server", NOW) == 2


def test_nothing_is_counted_where_no_limit_applies() -> None:
    assert searches_counted(None, ALICE, FIVE_A_DAY, "server", 3, NOW) is None  # a DM
    assert searches_counted(GUILD, ALICE, FIVE_A_DAY, "personal", 3, NOW) is None  # the member's own key
    assert searches_counted(GUILD, ALICE, Limits(), "server", 3, NOW) is None  # no searches limit set
    assert searches_counted(GUILD, ALICE, FIVE_A_DAY, "server", 0, NOW) is None
