"""Every settings write bumps its scope's stamp, found by walking the repository (not by
trusting a list): a write function of `bot.repo` either declares its scope with
`@config_write` or is bookkeeping named here with the reason; and each declared write,
called for real, leaves its scope stamped in its own transaction."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import select

import bot.capabilities
import bot.repo
from bot.capabilities.reading.settings import READING
from bot.db.engine import session_factory
from bot.db.models_processes import ConfigVersion
from bot.vault import Vault

GUILD, ALICE = 8001, 9001
WRITE_PREFIXES = ("set_", "add_", "remove_", "clear_", "record_", "take_", "delete_", "update_", "rotate_")
# Writes that are not settings: no cached copy depends on them (a key's rest does, and
# `record_key_failure` bumps for it itself: see tests/config/test_config_cache.py).
BOOKKEEPING = {
    "record_key_success": "health counters; a success only ends a rest early",
    "record_key_failure": "bumps by itself, only when it sets a rest",
    "record_answers": "conversation memory, read per message, never cached",
    "record_answer_facts": "what an answer's buttons need, read per press, never cached",
    "forget_parts": "conversation memory: a regenerated answer's deleted parts",
    "add_usages": "usage counters, counted in the database by every process",
    "take_message": "the hourly message counter, taken atomically in the database",
    "take_search": "the daily web search counter, taken atomically in the database",
    "add_searches": "the daily web search counter: searches a provider already ran",
    "add_reminder": "a reminder: read by the schedulers and /remind from the database, never cached",
    "set_zone": "the member's time zone: read when a reminder is set or listed, never cached",
    "take_image": "the daily image counter, taken atomically in the database",
}


def write_functions() -> dict[str, Callable[..., Awaitable[Any]]]:
    """Every write of the repository and of each capability's own storage."""
    found = {}
    modules = [f"bot.repo.{info.name}" for info in pkgutil.iter_modules(bot.repo.__path__)]
    modules += [info.name for info in pkgutil.walk_packages(bot.capabilities.__path__, "bot.capabilities.")
                if info.name.rsplit(".", 1)[-1].endswith("storage")]
    for name in modules:
        module = importlib.import_module(name)
        for name, fn in inspect.getmembers(module, inspect.iscoroutinefunction):
            if name.startswith(WRITE_PREFIXES) and fn.__module__ == module.__name__:
                found[name] = fn
    return found


def test_every_write_function_declares_its_scope_or_says_why_not() -> None:
    writes = write_functions()
    assert len(writes) > 20  # the walk found the repository
    undeclared = sorted(name for name, fn in writes.items()
                        if not hasattr(fn, "config_scope") and name not in BOOKKEEPING)
    assert undeclared == [], f"settings writes without @config_write: {undeclared}"


async def _prepare(session, vault: Vault) -> None:
    """What some writes need first: an endpoint, a fallback, a personal row, a key."""
    await bot.repo.set_custom_endpoint(session, GUILD, "http://127.0.0.1:9/v1", "model-a")
    await bot.repo.add_fallback(session, GUILD, "custom", "model-b")
    await bot.repo.set_personal_key(session, vault, ALICE, GUILD, "sk-alice-1234")
    await bot.repo.set_personal_model(session, ALICE, GUILD, "openai", "gpt-own")


def calls(vault: Vault) -> dict[str, Callable[[Any], Awaitable[Any]]]:
    """One real call per declared write (a new write needs a row here, or this fails)."""
    return {
        "set_text_model": lambda s: bot.repo.set_text_model(s, GUILD, "openai", "gpt-x"),
        "set_custom_endpoint": lambda s: bot.repo.set_custom_endpoint(s, GUILD, "http://127.0.0.1:9/v1", "m"),
        "set_thought_log_channel": lambda s: bot.repo.set_thought_log_channel(s, GUILD, 42),
        "set_member_keys_required": lambda s: bot.repo.set_member_keys_required(s, GUILD, True),
        "set_verbatim_tool_calling": lambda s: bot.repo.set_verbatim_tool_calling(s, GUILD, True),
        "add_fallback": lambda s: bot.repo.add_fallback(s, GUILD, "custom", "model-c"),
        "remove_fallback": lambda s: bot.repo.remove_fallback(s, GUILD, 1),
        "add_server_key": lambda s: bot.repo.add_server_key(s, vault, GUILD, "openai", "sk-new-5678"),
        "remove_server_key": lambda s: bot.repo.remove_server_key(s, GUILD, "openai", "key-1"),
        "set_personal_key": lambda s: bot.repo.set_personal_key(s, vault, ALICE, GUILD, "sk-alice-9999"),
        "remove_personal_key": lambda s: bot.repo.remove_personal_key(s, ALICE, GUILD),
        "set_personal_model": lambda s: bot.repo.set_personal_model(s, ALICE, GUILD, "openai", "gpt-y"),
        "set_personal_override": lambda s: bot.repo.set_personal_override(s, ALICE, GUILD, True),
        "set_personal_server_fallback": lambda s: bot.repo.set_personal_server_fallback(s, ALICE, GUILD, True),
        "set_persona": lambda s: _module("controls").set_persona(s, GUILD, None, "Be brief."),
        "clear_persona": lambda s: _module("controls").clear_persona(s, GUILD, None),
        "set_channel_mode": lambda s: _module("controls").set_channel_mode(s, GUILD, "allowlist"),
        "set_channel_rule": lambda s: _module("controls").set_channel_rule(s, GUILD, 77, "allow"),
        "add_access_rule": lambda s: _module("controls").add_access_rule(s, GUILD, 55, "block_member"),
        "remove_access_rule": lambda s: _module("controls").remove_access_rule(s, GUILD, 55, ("block_member",)),
        "set_params": lambda s: _module("params").set_params(s, GUILD, temperature=0.3),
        "set_listen_channel": lambda s: storage("listening").set_listen_channel(s, GUILD, 78, 12.0),
        "remove_listen_channel": lambda s: storage("listening").remove_listen_channel(s, GUILD, 78),
        "set_limits": lambda s: _module("usage").set_limits(s, GUILD, messages_per_hour=5),
        "set_price": lambda s: _module("usage").set_price(s, GUILD, "gpt-x", 1.0, 2.0),
        "set_values": lambda s: _module("capability_settings").set_values(s, GUILD, READING, {"read_links": False}),
        "set_memory": lambda s: storage("memory").set_memory(s, ALICE, True),
        "clear_memories": lambda s: storage("memory").clear_memories(s, ALICE, GUILD),
        "add_memory": lambda s: storage("memory").add_memory(s, ALICE, GUILD, "I like tea."),
        "remove_memory": lambda s: storage("memory").remove_memory(s, ALICE, GUILD, 1),
        "delete_member_memories": lambda s: storage("memory").delete_member_memories(s, ALICE),
        "add_server_fact": lambda s: storage("memory").add_server_fact(s, GUILD, "We open at 9.", ALICE),
        "remove_server_fact": lambda s: storage("memory").remove_server_fact(s, GUILD, 1),
        "set_switch": lambda s: storage("mcp_tools").set_switch(s, GUILD, "tiny", "", False),
        "set_image_target": lambda s: image_routes().set_image_target(s, GUILD, "openai", "gpt-image-1"),
        "clear_image_target": lambda s: image_routes().clear_image_target(s, GUILD),
        "set_image_price": lambda s: image_routes().set_image_price(s, GUILD, "gpt-image-1", 0.04),
    }


def _module(name: str) -> Any:
    return importlib.import_module(f"bot.repo.{name}")


def storage(capability: str) -> Any:
    return importlib.import_module(f"bot.capabilities.{capability}.storage")


def image_routes() -> Any:
    return importlib.import_module("bot.capabilities.images.route_storage")


async def _stamp(session, scope: str, scope_id: int) -> int:
    return await session.scalar(select(ConfigVersion.version).where(
        ConfigVersion.scope == scope, ConfigVersion.scope_id == scope_id)) or 0


@pytest.mark.parametrize("name", sorted(n for n, fn in write_functions().items() if hasattr(fn, "config_scope")))
async def test_each_settings_write_stamps_its_scope_in_its_transaction(name: str, engine) -> None:
    vault = Vault([Fernet.generate_key()])
    table = calls(vault)
    assert name in table, f"add a call for {name} to calls()"
    sessions = session_factory(engine)
    async with sessions() as session, session.begin():
        await _prepare(session, vault)
    scope = write_functions()[name].config_scope
    scope_id = GUILD if scope == "server" else ALICE
    async with sessions() as session:
        before = await _stamp(session, scope, scope_id)
    async with sessions() as session, session.begin():
        await table[name](session)
    async with sessions() as session:
        assert await _stamp(session, scope, scope_id) > before
