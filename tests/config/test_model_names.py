"""Model names from the provider's own list, through the real discord.py client and the
real SDKs: `/model set` and `/model fallback add` (the server's key, else the operator's),
`/personal model` (the member's own key), autocompleted from what is kept (INTERACTION_CREATE
type 4 answered with callback type 8 within Discord's 3 s), the list fetched in the
background once per route, a failing list offering nothing and logged once per outage,
a name the list lacks stored with a warning, and OpenRouter's `supported_parameters`
reaching the capabilities a turn reads.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from dataclasses import dataclass
from typing import Any

from bot.catalog.cache import MAX_AGE, RETRY_AFTER_FAILURE, ModelCatalog
from bot.catalog.routes import ListRoute
from bot.repo import KeyLease, KeyRef
from bot.repo.routes import environment_target
from bot.turn.attempts import open_adapter
from providers.identity import Provider
from tests.support.check_catalog import fetching
from tests.support.data_errors import openai_error
from tests.support.drive_commands import (
    NO_PERMISSIONS,
    autocomplete,
    command,
    group,
    opt,
    sub,
    submit_modal,
)
from tests.support.drive_discord_client import running_bot
from tests.support.env_bot_config import configure_server
from tests.support.fake_model_lists import (
    AnthropicModels,
    FixedListing,
    OpenAIModels,
    OpenRouterModels,
)
from tests.support.fake_provider_server import Reply

POOL_KEY = "sk-pool-first"  # configure_server's first key: the one that lists
IDS = [f"gpt-mini-{n:02d}" for n in range(30)] + ["omni-mini", "mini-pro", "mini", "llama-3-70b"]


@dataclass
class Slow:
    """A listing that waits before each answer, so keystrokes arrive while it is fetched."""

    listing: Any
    delay: float

    def page(self, path: str, query: Any) -> Reply:
        return self.listing.page(path, query).with_options(first_byte_delay=self.delay)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def focused(value: str) -> dict[str, Any]:
    return {"type": 3, "name": "model", "value": value, "focused": True}


async def set_choices(run, fake, typed: str, provider: str = "custom", **options: Any) -> list[dict]:
    return await autocomplete(run, fake, "model", sub("set", opt("provider", provider), focused(typed)), **options)


def custom_key(server) -> Any:
    return ListRoute(Provider.CUSTOM, f"{server.url}/v1", POOL_KEY).key


def log_lines(caplog) -> list[str]:
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    return [formatter.format(record) for record in caplog.records]


async def test_names_come_from_a_warm_list_best_first_and_a_cold_one_warms_in_the_background(
        fake_discord, bot_factory, provider_server):
    fake, server = fake_discord, provider_server
    server.listing = Slow(OpenAIModels(IDS), 0.5)
    bot = bot_factory(ALLOW_PRIVATE_ENDPOINTS="true")
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        cold = [await set_choices(run, fake, typed) for typed in ("", "m", "mi")]  # all while it is fetched
        await run.wait_for(lambda: bot.access.catalog.kept(custom_key(server)) is not None)
        everything = await set_choices(run, fake, "")
        minis = await set_choices(run, fake, "MINI")
        fallback = await autocomplete(run, fake, "model", group("fallback", sub("add", opt("provider", "custom"),
                                                                              focused("llama"))))
    assert cold == [[], [], []]
    [listed] = server.requests  # one fetch for three keystrokes
    assert (listed.method, listed.path, listed.api_key) == ("GET", "/v1/models", POOL_KEY)
    assert len(everything) == 25 and everything[0] == {"name": "gpt-mini-00", "value": "gpt-mini-00"}
    # The exact name, then those it starts, then those holding it, each in the list's order; 25 at most.
    assert [c["value"] for c in minis] == ["mini", "mini-pro", *(f"gpt-mini-{n:02d}" for n in range(23))]
    assert [c["value"] for c in fallback] == ["llama-3-70b"]


async def test_a_failing_list_offers_nothing_and_is_logged_once_per_outage(fake_discord, bot_factory,
                                                                         provider_server, caplog):
    caplog.set_level(logging.DEBUG)
    fake, server, clock = fake_discord, provider_server, Clock()
    refused = openai_error(401, "Incorrect API key provided: sk-poo***irst.", code="invalid_api_key",
                           kind="invalid_request_error")
    server.listing = FixedListing(refused)
    bot = bot_factory(ALLOW_PRIVATE_ENDPOINTS="true")
    bot.access = dataclasses.replace(bot.access, catalog=ModelCatalog(clock))
    key = custom_key(server)

    async def keystroke_until(requests: int) -> list[dict]:
        choices = await set_choices(run, fake, "gpt")
        await run.wait_for(lambda: len(server.requests) == requests and not fetching(bot.access.catalog, key))
        return choices

    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        offered = [await keystroke_until(1)]
        offered.append(await set_choices(run, fake, "gpt"))  # within the minute: not asked again
        await asyncio.sleep(0.2)
        assert len(server.requests) == 1
        clock.now += RETRY_AFTER_FAILURE
        offered.append(await keystroke_until(2))  # still failing: the same outage
        server.listing = OpenAIModels(IDS)
        clock.now += RETRY_AFTER_FAILURE
        await keystroke_until(3)  # it answers again
        offered.append(await set_choices(run, fake, "llama"))
        server.listing = FixedListing(refused)
        clock.now += MAX_AGE
        await keystroke_until(4)  # a new outage
    assert offered[:3] == [[], [], []]
    assert [c["value"] for c in offered[3]] == ["llama-3-70b"]
    warnings = [line for line in log_lines(caplog) if "bot.catalog.cache" in line]
    assert len(warnings) == 2, warnings
    assert "custom" in warnings[0] and "127.0.0.1" in warnings[0] and "invalid_key, HTTP 401" in warnings[0]
    # Neither the key nor the part of it the provider's message quotes reaches a log line.
    assert not any(POOL_KEY in line or "sk-poo***irst" in line for line in log_lines(caplog))


async def test_a_name_the_list_lacks_is_stored_with_a_warning(fake_discord, bot_factory, provider_server):
    fake, server = fake_discord, provider_server
    server.listing = OpenAIModels(IDS)
    bot = bot_factory(ALLOW_PRIVATE_ENDPOINTS="true")
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        unknown = await command(run, fake, "model", sub("set", opt("provider", "custom"), opt("model", "gpt-mnii")))
        await set_choices(run, fake, "")  # the list is read now
        await run.wait_for(lambda: bot.access.catalog.kept(custom_key(server)) is not None)
        typo = await command(run, fake, "model", sub("set", opt("provider", "custom"), opt("model", "gpt-mnii")))
        listed = await command(run, fake, "model", sub("set", opt("provider", "custom"), opt("model", "mini")))
        fallback = await command(run, fake, "model", group("fallback", sub(
            "add", opt("provider", "custom"), opt("model", "lama-3"))), locale="ja")
        stored = await command(run, fake, "model", group("fallback", sub("list")))
    assert unknown.content == "Text model set to custom / `gpt-mnii`."  # no list known yet: no warning
    assert typo.content.splitlines() == [
        "Text model set to custom / `gpt-mnii`.",
        "Note: this name is not in the provider's list of models: check the spelling (it is stored as typed)."]
    assert listed.content == "Text model set to custom / `mini`."
    assert fallback.content.splitlines()[1].startswith("注意: この名前はプロバイダーのモデル一覧にありません")
    assert "`lama-3`" in stored.content


async def test_a_personal_route_lists_with_the_members_own_key(fake_discord, bot_factory, provider_server,
                                                               monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    fake, server = fake_discord, provider_server
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.listing = AnthropicModels(["claude-opus-5", "claude-sonnet-5", "claude-haiku-4-5"])
    own = "sk-ant-members-own-5e1f"
    bot = bot_factory()
    async with running_bot(fake, bot) as run:
        form = await command(run, fake, "keys", sub("add", opt("provider", "anthropic"), opt("label", "pool")))
        await submit_modal(run, fake, form, "sk-ant-servers-pool-9d0c")  # the server's key must not list this
        form = await command(run, fake, "personal", group("key", sub("set")), permissions=NO_PERMISSIONS)
        await submit_modal(run, fake, form, own, permissions=NO_PERMISSIONS)

        async def complete(typed: str) -> list[dict]:
            return await autocomplete(run, fake, "personal", sub("model", opt("provider", "anthropic"),
                                                                 focused(typed)), permissions=NO_PERMISSIONS)

        assert await complete("") == []
        await run.wait_for(lambda: len(server.requests) == 1)
        await run.wait_for(lambda: bool(bot.access.catalog.kept(ListRoute(Provider.ANTHROPIC, None, own).key)))
        sonnets = await complete("sonnet")
        chosen = await command(run, fake, "personal", sub("model", opt("provider", "anthropic"),
                                                          opt("model", "claude-sonet-5")), permissions=NO_PERMISSIONS)
    [listed] = server.requests
    assert (listed.path, listed.query, listed.api_key) == ("/v1/models", {"limit": "1000"}, own)
    assert [c["value"] for c in sonnets] == ["claude-sonnet-5"]
    assert chosen.content.splitlines()[1].startswith("Note: this name is not in the provider's list")
    assert not any(own in line for line in log_lines(caplog))


async def test_managers_only_and_no_key_no_list(fake_discord, bot_factory, provider_server):
    fake, server = fake_discord, provider_server
    server.listing = OpenAIModels(IDS)
    bot = bot_factory(ALLOW_PRIVATE_ENDPOINTS="true")
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server, keys=())  # a keyless custom endpoint
        keyless = await set_choices(run, fake, "")
        no_key = await set_choices(run, fake, "", provider="anthropic")
        await configure_server(bot, fake, server, keys=(POOL_KEY,))
        member = await set_choices(run, fake, "", permissions=NO_PERMISSIONS)
        await asyncio.sleep(0.3)
    assert keyless == no_key == member == []
    assert server.requests == []


async def test_openrouters_listed_parameters_reach_the_capabilities_of_a_turn(fake_discord, bot_factory,
                                                                           provider_server):
    fake, server = fake_discord, provider_server
    base = f"{server.url}/api/v1"
    server.listing = OpenRouterModels({"vendor/chat-only": ["temperature", "max_tokens"],
                                       "vendor/agent": ["tools", "reasoning", "temperature"]})
    operator_key = "sk-or-operator-env-3c2b"
    bot = bot_factory(DEFAULT_TEXT_PROVIDER="openrouter", DEFAULT_TEXT_MODEL="vendor/chat-only",
                      DEFAULT_TEXT_BASE_URL=base, DEFAULT_TEXT_API_KEYS=operator_key)
    target = environment_target(bot.settings)
    lease = KeyLease(KeyRef("environment", "f"), "…3c2b", operator_key)
    assert open_adapter(target, lease, False, bot.access).capabilities.tools  # nothing known: all assumed
    async with running_bot(fake, bot) as run:
        assert await set_choices(run, fake, "vendor", provider="openrouter") == []
        await run.wait_for(lambda: bool(bot.access.catalog.kept(ListRoute(Provider.OPENROUTER, base,
                                                                           operator_key).key)))
        offered = await set_choices(run, fake, "vendor", provider="openrouter")
    [listed] = server.requests
    assert (listed.path, listed.api_key) == ("/api/v1/models", operator_key)  # the operator's key, address
    assert [c["value"] for c in offered] == ["vendor/chat-only", "vendor/agent"]
    chat_only = open_adapter(target, lease, False, bot.access).capabilities
    assert (chat_only.tools, chat_only.web_search, chat_only.reasoning) == (False, "openrouter_plugin", None)
    agent = open_adapter(dataclasses.replace(target, model="vendor/agent"), lease, False, bot.access).capabilities
    assert (agent.tools, agent.web_search) == (True, "openrouter_server_tool")


async def test_an_openrouter_turn_reads_the_list_for_the_next_one(fake_discord, bot_factory, provider_server):
    """After a restart nothing is known of OpenRouter's models: the first turn assumes
    everything (and is not held up), and reads the list with its own key in the
    background, so the next turn of a model that takes no tools gets the web plugin."""
    from tests.support.data_openai import openai_stream
    from tests.turn.test_turn_discord import ask

    fake, server = fake_discord, provider_server
    base = f"{server.url}/api/v1"
    server.listing = OpenRouterModels({"vendor/chat-only": ["temperature", "max_tokens"]})
    server.reply(openai_stream("Plain answer."))
    key = "sk-or-operator-env-7d1e"
    bot = bot_factory(DEFAULT_TEXT_PROVIDER="openrouter", DEFAULT_TEXT_MODEL="vendor/chat-only",
                      DEFAULT_TEXT_BASE_URL=base, DEFAULT_TEXT_API_KEYS=key)
    async with running_bot(fake, bot) as run:
        await ask(fake, "hello?")
        await run.wait_for(lambda: any(r.path == "/api/v1/models" for r in server.requests))
        await run.wait_for(lambda: bool(bot.access.catalog.kept(ListRoute(Provider.OPENROUTER, base, key).key)))
        await ask(fake, "hello again?")
        await run.wait_for(lambda: len([r for r in server.requests if r.path.endswith("/chat/completions")]) == 2)
    first, second = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert "tools" in first.json  # nothing known yet: the model was assumed to take tools
    assert "tools" not in second.json  # the list said it takes none: the bot's tools are not declared
    [listed] = [r for r in server.requests if r.path == "/api/v1/models"]
    assert listed.api_key == key  # read once, with the turn's own key
