"""The parts of `bot/catalog/` on their own: matching typed text, a listed name, the kept
lists (single flight, staleness, bounds, OpenRouter's parameters), and key fingerprints."""

from __future__ import annotations

import asyncio
import hashlib

from bot.catalog import cache
from bot.catalog.cache import MAX_AGE, ListKey, ModelCatalog
from bot.catalog.choices import best_matches, is_listed
from bot.catalog.routes import ListRoute, chosen_provider, key_print
from providers.identity import Provider
from providers.model_list import ListedModel
from tests.support.check_catalog import fetching

MODELS = tuple(ListedModel(name) for name in ("gpt-5.5", "o3", "gpt-5.5-mini", "chatgpt-5", "GPT-OSS", "x" * 101))
KEY = ListKey(Provider.OPENROUTER, None, "print")


async def settled(catalog: ModelCatalog, key: ListKey = KEY) -> None:
    while fetching(catalog, key):
        await asyncio.sleep(0)


def test_matching_ignores_case_puts_exact_then_prefix_then_inner_and_skips_unofferable_names():
    assert best_matches(MODELS, "gpt") == ["gpt-5.5", "gpt-5.5-mini", "GPT-OSS", "chatgpt-5"]
    assert best_matches(MODELS, "GPT-5.5") == ["gpt-5.5", "gpt-5.5-mini"]
    assert best_matches(MODELS, "  mini ") == ["gpt-5.5-mini"]
    assert best_matches(MODELS, "") == ["gpt-5.5", "o3", "gpt-5.5-mini", "chatgpt-5", "GPT-OSS"]  # 101 chars: never
    assert len(best_matches([ListedModel(f"m{n}") for n in range(100)], "m")) == 25
    assert best_matches(MODELS, "claude") == []


def test_a_listed_name_is_the_same_id_and_for_gemini_its_resource_form_too():
    listed = (ListedModel("gemini-3-flash"),)
    assert is_listed(listed, Provider.GOOGLE, " models/gemini-3-flash ")
    assert is_listed(listed, Provider.GOOGLE, "gemini-3-flash")
    assert not is_listed(listed, Provider.OPENROUTER, "models/gemini-3-flash")
    assert not is_listed(listed, Provider.GOOGLE, "Gemini-3-Flash")


def test_a_route_is_keyed_by_a_fingerprint_never_the_key():
    route = ListRoute(Provider.ANTHROPIC, None, "sk-ant-secret-1234")
    assert route.key == ListRoute(Provider.ANTHROPIC, None, "sk-ant-secret-1234").key
    assert route.key != ListRoute(Provider.ANTHROPIC, None, "sk-ant-secret-5678").key
    assert "sk-ant" not in repr(route) and "1234" not in repr(route.key)
    # Keyed per process: not the plain hash a dump could test guesses against.
    assert key_print("sk-ant-secret-1234") != hashlib.sha256(b"sk-ant-secret-1234").hexdigest()[:32]
    assert chosen_provider("OpenRouter") is Provider.OPENROUTER
    assert chosen_provider(None) is None and chosen_provider("nope") is None


async def test_one_fetch_per_route_at_a_time_and_a_stale_list_is_served_while_it_is_read_again():
    now = [0.0]
    catalog = ModelCatalog(lambda: now[0])
    calls: list[int] = []
    gate = asyncio.Event()

    async def fetch() -> tuple[ListedModel, ...]:
        calls.append(len(calls))
        await gate.wait()
        return (ListedModel(f"m{len(calls)}", frozenset({"tools"})),)

    assert catalog.models(KEY, fetch) == () and catalog.models(KEY, fetch) == ()
    assert fetching(catalog, KEY)
    gate.set()
    await settled(catalog)
    assert calls == [0] and catalog.models(KEY, fetch) == (ListedModel("m1", frozenset({"tools"})),)
    assert catalog.listed_parameters(Provider.OPENROUTER, None, " m1 ") == frozenset({"tools"})
    assert catalog.listed_parameters(Provider.OPENROUTER, "https://gateway.example/api/v1", "m1") is None
    now[0] += MAX_AGE
    gate.clear()
    assert catalog.models(KEY, fetch) == (ListedModel("m1", frozenset({"tools"})),)  # stale, served
    gate.set()
    await settled(catalog)
    assert calls == [0, 1] and [m.id for m in catalog.models(KEY, fetch)] == ["m2"]
    assert catalog.listed_parameters(Provider.OPENROUTER, None, "m1") is None  # the newest list answers


async def test_kept_lists_are_bounded_and_closing_stops_running_fetches(monkeypatch):
    monkeypatch.setattr(cache, "MAX_ROUTES", 3)
    catalog = ModelCatalog()

    async def quick() -> tuple[ListedModel, ...]:
        return (ListedModel("m"),)

    keys = [ListKey(Provider.CUSTOM, f"https://h{n}.example/v1", "p") for n in range(5)]
    for key in keys:
        catalog.models(key, quick)
        await settled(catalog, key)
    assert [catalog.kept(key) is not None for key in keys] == [False, False, True, True, True]

    async def never() -> tuple[ListedModel, ...]:
        await asyncio.Event().wait()
        return ()

    catalog.models(KEY, never)
    assert fetching(catalog, KEY)
    await catalog.aclose()
    assert not fetching(catalog, KEY) and catalog.kept(KEY) is None
