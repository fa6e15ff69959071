"""The privacy sections on SQLite and PostgreSQL: the export holds each table's rows of
the member and nobody else's, a key only as its last four characters; the erasure takes
the member's rows (today's limit counters and a manager's block excepted), nobody
else's, and stamps the member's configuration."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from bot.capabilities.privacy.everything import erase_everything, exported
from bot.capabilities.privacy.kept import KEPT, kept_on_erase
from bot.db.models_processes import ConfigVersion
from bot.load.config_cache import ConfigCache
from bot.repo.common import ensure_server
from bot.settings import load_settings
from tests.capabilities.privacy.member_rows import AFTER_ERASE, SEEDED, counts, seed

GUILD, ALICE, BOB = 4242, 9001, 9002
ALICE_KEY, BOB_KEY = "sk-ALICE-full-secret-a1c3", "sk-BOB-full-secret-b0b5"


async def seeded_pair(sessions, vault):
    async with sessions() as session, session.begin():
        await ensure_server(session, GUILD)
        alice = await seed(session, vault, ALICE, GUILD, ALICE_KEY)
        bob = await seed(session, vault, BOB, GUILD, BOB_KEY)
    return alice, bob


async def test_export_holds_every_section_of_the_member_only(sessions, vault):
    await seeded_pair(sessions, vault)
    async with sessions() as session:
        sections = dict(await exported(session, ALICE))
    assert list(sections) == [data.name for data in KEPT]
    assert {name: len(rows) for name, rows in sections.items()} == {
        "personal_settings": 2, "usage_days": 3, "message_hours": 2, "search_days": 2, "answers": 2,
        "memories": 3, "reminders": 2, "image_days": 2,
        "voice_transcripts": 1, "blocked_by_servers": 1}
    keys = sorted(row["key"] for row in sections["personal_settings"])
    assert keys == ["\u2026a1c3", "\u2026obal"]  # the stored last four, behind the mask
    here = next(r for r in sections["personal_settings"] if r["server_id"] == str(GUILD))
    assert (here["provider"], here["model"], here["override_enabled"]) == ("anthropic", "claude-own", False)
    first = sections["answers"][0]
    assert first["sources"] == [{"url": "https://example.com/a", "title": "A page"}]
    assert len(first["message_ids"]) == 2 and first["reasoning"] == "thought"
    assert sections["blocked_by_servers"] == [{"server_id": str(GUILD), "rule": "block_member"}]
    text = json.dumps(sections)
    assert "ALICE-full" not in text and str(BOB) not in text and "BOB" not in text


async def test_erase_takes_the_members_rows_in_one_go_and_stamps_them(sessions, vault):
    alice, bob = await seeded_pair(sessions, vault)
    async with sessions() as session:
        assert await counts(session, alice) == SEEDED and await counts(session, bob) == SEEDED
    async with sessions() as session, session.begin():
        erased = await erase_everything(session, ALICE)
    assert erased == {"personal_settings": 2, "usage_days": 2, "message_hours": 1, "search_days": 1,
                      "answers": 6, "memories": 3, "reminders": 2,
                      "image_days": 1, "voice_transcripts": 1, "blocked_by_servers": 0}
    async with sessions() as session:
        assert await counts(session, alice) == AFTER_ERASE
        assert await counts(session, bob) == SEEDED
        stamp = await session.scalar(select(ConfigVersion.version).where(
            ConfigVersion.scope == "member", ConfigVersion.scope_id == ALICE))
        assert stamp is not None
    assert [data.name for data in KEPT if kept_on_erase(data)] == ["blocked_by_servers"]


async def test_a_failed_section_erases_nothing(sessions, vault):
    """One transaction: a section that fails after others deleted rolls them all back."""
    alice, _ = await seeded_pair(sessions, vault)

    class Failing:
        name = "failing"

        async def export(self, session, user_id):
            return []

        async def erase(self, session, user_id):
            raise RuntimeError("the disk is gone")

    with pytest.raises(RuntimeError):
        async with sessions() as session, session.begin():
            await erase_everything(session, ALICE, (*KEPT, Failing()))
    async with sessions() as session:
        assert await counts(session, alice) == SEEDED


async def test_every_process_drops_the_erased_members_cached_route(engine_factory, vault):
    """Two processes on one database: the one that erased drops its copy at commit, the
    other at its next poll (the member's stamp), and neither routes on the erased key."""
    settings = load_settings(_env_file=None)
    here, there = ConfigCache(engine_factory(), settings), ConfigCache(engine_factory(), settings)
    await seeded_pair(here.sessions, vault)
    for cache in (here, there):
        await cache.poll()
        assert (await cache.personal(ALICE, GUILD)).info.model == "claude-own"  # read and kept
    async with here.sessions() as session, session.begin():
        await erase_everything(session, ALICE)
    assert (await here.personal(ALICE, GUILD)).info is None
    assert await there.poll() == 1
    assert (await there.personal(ALICE, GUILD)).info is None
    assert (await there.personal(BOB, GUILD)).info.model == "claude-own"
