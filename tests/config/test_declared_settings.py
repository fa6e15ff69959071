"""Settings declared once (`bot.capabilities.declared`): what a declaration takes and
refuses, stored values checked again when read (unknown or out of bounds: the default,
logged once), two processes changing two settings of one capability at once, and the
/settings subcommands Discord is given from the declarations."""

from __future__ import annotations

import asyncio
import logging
import math

import pytest

from bot.capabilities import declared
from bot.capabilities.declarations import DECLARATIONS, declared_keys
from bot.capabilities.declared import OutOfBounds, Setting, SettingsDeclaration, server_values
from bot.capabilities.web_search.settings import WEB_SEARCH
from bot.db.engine import session_factory
from bot.db.models import CapabilitySettings
from bot.repo.capability_settings import read_server_values, read_values, set_values
from tests.support.drive_discord_client import running_bot

GUILD = 7301
SWITCH = Setting("sample_switch", bool, True)
DEPTH = Setting("sample_depth", int, 4, 0, 8, option="messages")
WAIT = Setting("sample_wait", float, 2.0, 0, 10, option="seconds")
SAMPLE = SettingsDeclaration("sample", (SWITCH, DEPTH, WAIT))
DISCORD_SUBCOMMANDS = 25  # Discord's most per group


def test_each_type_takes_its_own_values_within_bounds():
    assert [SWITCH.accepts(v) for v in (True, False, 1, "yes")] == [True, True, False, False]
    assert [DEPTH.accepts(v) for v in (0, 8, 9, -1, 2.0, True)] == [True, True, False, False, False, False]
    assert [WAIT.accepts(v) for v in (0, 2.5, 10, 10.5, math.nan, math.inf, False)] == [
        True, True, True, False, False, False, False]
    assert WAIT.checked(3) == 3.0 and isinstance(WAIT.checked(3), float)
    with pytest.raises(OutOfBounds, match="sample_depth"):
        DEPTH.checked(9)


def test_a_declaration_that_cannot_hold_is_refused_when_declared():
    with pytest.raises(TypeError, match="bounds"):
        Setting("unbounded", int, 1)
    with pytest.raises(TypeError, match="default"):
        Setting("too_deep", int, 9, 0, 8)
    with pytest.raises(TypeError, match="twice"):
        SettingsDeclaration("twice", (SWITCH, SWITCH))


def test_the_refusal_and_derived_lines_name_the_setting():
    assert DEPTH.refusal == ("commands.error.sample_depth_out_of_range", {"low": 0, "limit": 8})
    assert WAIT.refusal == ("commands.error.sample_wait_out_of_range", {"low": "0", "limit": "10"})
    assert SWITCH.said("reply", False) == ("commands.reply.sample_switch_off", {})
    assert WAIT.said("status", 2.5) == ("commands.status.sample_wait", {"value": "2.5"})
    assert {"commands.settings.sample_depth.name", "commands.param.messages.description",
            "commands.reply.sample_depth_set", "commands.status.sample_depth"} <= DEPTH.keys()
    assert "commands.settings.web_search.name" in declared_keys()
    assert "commands.settings.max_searches.name" not in declared_keys()  # an option of web-search


def test_stored_values_are_checked_when_read_and_a_bad_one_logged_once(caplog):
    declared._LOGGED.clear()
    with caplog.at_level(logging.WARNING, logger="bot.capabilities.declared"):
        first = SAMPLE.read({"sample_switch": False, "sample_depth": 99, "sample_gone": 1, "sample_wait": "2"})
        again = SAMPLE.read({"sample_depth": 99})
    assert dict(first) == {"sample_switch": False, "sample_depth": 4, "sample_wait": 2.0}
    assert dict(again) == {"sample_switch": True, "sample_depth": 4, "sample_wait": 2.0}
    assert sorted(r.getMessage().split("=")[0] for r in caplog.records) == [
        "stored setting sample.sample_depth", "stored setting sample.sample_gone", "stored setting sample.sample_wait"]
    assert server_values([SAMPLE]).value("sample", "sample_depth") == 4


async def test_a_value_stored_out_of_bounds_reads_as_its_default(sessions):
    async with sessions() as session, session.begin():
        await set_values(session, GUILD, WEB_SEARCH, {"web_search": True})
        row = await session.get(CapabilitySettings, (GUILD, "web_search"))
        row.settings = {"web_search": True, "max_searches": 40}  # written by some other bot
    async with sessions() as session:
        assert await read_values(session, WEB_SEARCH, GUILD) == {**WEB_SEARCH.defaults(), "web_search": True}
        everything = await read_server_values(session, DECLARATIONS, GUILD)
    assert everything.value("web_search", "max_searches") == 3 and everything.value("reading", "read_links") is True


async def test_two_processes_changing_two_settings_at_once_keep_both(engine_factory):
    first, second = session_factory(engine_factory()), session_factory(engine_factory())
    async with first() as session, session.begin():
        await set_values(session, GUILD, WEB_SEARCH, {"web_search": False})

    async def write(sessions, changes):
        async with sessions() as session, session.begin():
            await set_values(session, GUILD, WEB_SEARCH, changes)

    await asyncio.gather(write(first, {"web_search": True}), write(second, {"max_searches": 9}))
    async with first() as session:
        assert await read_values(session, WEB_SEARCH, GUILD) == {**WEB_SEARCH.defaults(), "web_search": True,
                                                                   "max_searches": 9}


async def test_settings_subcommands_come_from_the_declarations_within_discords_limit(fake_discord, bot_factory):
    async with running_bot(fake_discord, bot_factory()):
        synced = list(fake_discord.commands["global"])
    [group] = [c for c in synced if c["name"] == "settings"]
    subcommands = {option["name"]: option for option in group["options"]}
    assert len(subcommands) <= DISCORD_SUBCOMMANDS
    declared = {setting.name.replace("_", "-") for d in DECLARATIONS for setting in d.settings
                if setting.part_of is None}
    assert declared <= subcommands.keys()
    search = {option["name"]: option for option in subcommands["web-search"]["options"]}
    assert (search["enabled"]["type"], search["enabled"]["required"]) == (5, True)  # a BOOLEAN
    assert (search["max_searches"]["type"], search["max_searches"].get("required", False),
            search["max_searches"]["min_value"], search["max_searches"]["max_value"]) == (4, False, 1, 10)
