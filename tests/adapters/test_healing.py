"""Self-healing a request a provider refused for one parameter (providers/healing.py).

The refusal bodies are the providers' own, as their documentation and public trackers show
them; the heal is seen on the wire: the real SDKs against the replay server, a 400 naming
the parameter, then the same request again without it (or with the value named), on the
same key, at most twice, remembered for the route, logged once.
"""

from __future__ import annotations

import logging

import pytest

from providers.adapter import create_adapter, normalized_stream
from providers.client_pool import ClientPool
from providers.endpoint_check import EndpointPolicy
from providers.healing import (
    MAX_REFUSALS_PER_ROUTE,
    MAX_ROUTES,
    Refusal,
    RefusalMemory,
    heal,
    refusal_of,
)
from providers.types import ChatRequest, Message
from tests.support import data_anthropic as anthropic_data
from tests.support import data_gemini as gemini_data
from tests.support import data_openai as fx
from tests.support.fake_provider_server import Reply

# OpenAI's reasoning models on a temperature (vercel/ai responses fixture
# reasoning-model-temperature-error.json, a recorded body).
OPENAI_TEMPERATURE = {"error": {"message": "Unsupported parameter: 'temperature' is not supported with this model.",
                                "type": "invalid_request_error", "param": "temperature", "code": None}}
# OpenAI's 400 for function tools next to reasoning on Chat Completions (gpt-5.6 wording,
# as reported in LibreChat #14231, litellm #34569, GEMISIS/leviath #333).
OPENAI_TOOLS_WITH_EFFORT = {"error": {
    "message": "Function tools with reasoning_effort are not supported for gpt-5.6-terra in /v1/chat/completions. "
               "To use function tools, use /v1/responses or set reasoning_effort to 'none'.",
    "type": "invalid_request_error", "param": "reasoning_effort", "code": None}}
# The gpt-5.4/5.5 wording (pipecat #4043): the parameter named, no value hinted.
OPENAI_TOOLS_WITH_EFFORT_54 = {"error": {
    "message": "Function tools with reasoning_effort are not supported for gpt-5.4 in /v1/chat/completions. "
               "Please use /v1/responses instead.",
    "type": "invalid_request_error", "param": "reasoning_effort", "code": None}}
# o1-mini refusing a system message (the shared corpus's openai_400_unsupported_value.json):
# it names a message, which is the request's structure, never dropped.
OPENAI_SYSTEM_ROLE = {"error": {"message": "Unsupported value: 'messages[0].role' does not support 'system' with "
                                "this model.", "type": "invalid_request_error", "param": "messages[0].role",
                                "code": "unsupported_value"}}
# Anthropic API version 2026-10-21 on any sampling parameter.
ANTHROPIC_TEMPERATURE = {"type": "error", "error": {"type": "invalid_request_error",
                                                    "message": "temperature: Extra inputs are not permitted"}}
# Gemini's 400 for a field the model's API version does not know.
GEMINI_UNKNOWN_FIELD = {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message":
                                  "Invalid JSON payload received. Unknown name \"thinkingLevel\" at "
                                  "'generation_config.thinking_config': Cannot find field."}}
GEMINI_FIELD_VIOLATION = {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "Invalid argument.",
                                    "details": [{"@type": "type.googleapis.com/google.rpc.BadRequest",
                                                 "fieldViolations": [{"field": "generation_config.temperature",
                                                                      "description": "not supported"}]}]}}


# ---- reading the refusal (pure) ---------------------------------------------------------------
@pytest.mark.parametrize(("body", "refusal"), [
    (OPENAI_TEMPERATURE, Refusal("temperature")),
    (OPENAI_TEMPERATURE["error"], Refusal("temperature")),  # the openai SDK's `.body` is the inner object
    (OPENAI_TOOLS_WITH_EFFORT, Refusal("reasoning_effort", "none")),
    (OPENAI_TOOLS_WITH_EFFORT_54, Refusal("reasoning_effort")),
    (ANTHROPIC_TEMPERATURE, Refusal("temperature")),
    ({"type": "error", "error": {"type": "invalid_request_error",
                                 "message": "thinking.display: Extra inputs are not permitted"}},
     Refusal("thinking.display")),
    (GEMINI_UNKNOWN_FIELD, Refusal("generationConfig.thinkingConfig.thinkingLevel")),
    (GEMINI_FIELD_VIOLATION, Refusal("generationConfig.temperature")),
], ids=["openai", "openai-inner", "set-none", "openai-5.4", "anthropic", "anthropic-nested", "gemini", "gemini-field"])
def test_a_refused_parameter_is_read_from_each_providers_body(body, refusal):
    assert refusal_of(400, body) == refusal


@pytest.mark.parametrize("body", [
    OPENAI_SYSTEM_ROLE,  # a message of the request: structure
    {"error": {"message": "Unsupported parameter: 'messages' ...", "param": "messages", "code": "unsupported_parameter"}},
    {"type": "error", "error": {"type": "invalid_request_error", "message": "model: Extra inputs are not permitted"}},
    {"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: Extra inputs are not permitted"}},
    {"error": {"message": "This model's maximum context length is 8192 tokens", "param": "messages",
               "code": "context_length_exceeded"}},
    {"type": "error", "error": {"type": "not_found_error", "message": "model: claude-sonet-4-5"}},
    {"error": {"message": "Invalid 'temperature': decimal above maximum value.", "param": "temperature",
               "code": "decimal_above_max_value"}},  # a bad value of ours, not a parameter the model refuses
    "not json at all", None, {"error": "a string"}, {"error": {"message": 7, "param": ["x"]}},
], ids=["role", "messages", "model", "max_tokens", "context", "not-found", "range", "text", "none", "str", "types"])
def test_structure_and_other_failures_are_never_healed(body):
    assert refusal_of(400, body) is None


def test_only_a_400_is_a_refusal_to_heal():
    for status in (None, 200, 401, 404, 422, 429, 500, 529):
        assert refusal_of(status, OPENAI_TEMPERATURE) is None


def test_heal_drops_or_sets_and_never_changes_nothing():
    arguments = {"model": "m", "extra_body": {"temperature": 0.4, "reasoning": {"effort": "high", "summary": "auto"}}}
    dropped = heal(arguments, Refusal("temperature"))
    assert dropped == {"model": "m", "extra_body": {"reasoning": {"effort": "high", "summary": "auto"}}}
    assert arguments["extra_body"]["temperature"] == 0.4  # a copy: the attempt's own body is untouched
    assert heal(arguments, Refusal("reasoning.summary")) == {
        "model": "m", "extra_body": {"temperature": 0.4, "reasoning": {"effort": "high"}}}
    assert heal({"reasoning_effort": "high"}, Refusal("reasoning_effort", "none")) == {"reasoning_effort": "none"}
    assert heal({"reasoning_effort": "none"}, Refusal("reasoning_effort", "none")) is None  # would not change
    assert heal({"top_p": 1}, Refusal("temperature")) is None  # nothing to drop


def test_the_memory_is_bounded_and_logs_each_refusal_once(caplog):
    memory = RefusalMemory()
    route = ("anthropic", None, "claude-x")
    with caplog.at_level(logging.WARNING, logger="providers.healing"):
        for _ in range(3):
            memory.remember(route, Refusal("temperature"))
    assert memory.refusals(route) == [Refusal("temperature")]
    assert len(caplog.records) == 1 and "temperature dropped" in caplog.records[0].getMessage()
    for n in range(MAX_REFUSALS_PER_ROUTE + 5):
        memory.remember(route, Refusal(f"p{n}"))
    assert len(memory.refusals(route)) == MAX_REFUSALS_PER_ROUTE
    for n in range(MAX_ROUTES + 10):
        memory.remember(("custom", f"http://h{n}", "m"), Refusal("temperature"))
    assert memory.refusals(route) == []  # the oldest routes are forgotten first
    assert memory.refusals(("custom", f"http://h{MAX_ROUTES + 9}", "m")) == [Refusal("temperature")]


def test_a_log_line_names_no_key_and_cannot_be_forged(caplog):
    memory = RefusalMemory()
    with caplog.at_level(logging.WARNING, logger="providers.healing"):
        memory.remember(("custom", "http://h/v1", "m\nFAKE LINE: key=sk-x"), Refusal("temperature"))
    [record] = caplog.records
    assert "\n" not in record.getMessage()


# ---- healed on the wire, through each real SDK ------------------------------------------------------
ASK = ChatRequest(messages=[Message("user", "hi")], temperature=0.3)


async def _answer(server, provider: str, model: str, pool: ClientPool, request: ChatRequest = ASK) -> str:
    options = {"base_url": server.url} if provider in ("anthropic", "google") else {
        "base_url": f"{server.url}/v1", "endpoint_policy": EndpointPolicy(allow_private=True)}
    adapter = create_adapter(provider, api_key="sk-heal-key-0001", model=model, timeout=10, clients=pool, **options)
    try:
        chunks = [chunk async for chunk in normalized_stream(adapter, request)]
    finally:
        await adapter.aclose()
    assert chunks[-1].type == "done", chunks[-1]
    return "".join(c.content or "" for c in chunks if c.type == "text")


FAMILIES = {
    # provider, model, the refusal, the body key the heal leaves out, a good answer
    "custom": ("custom", "gpt-compatible", Reply.error(400, OPENAI_TEMPERATURE), "temperature",
               Reply(body=fx.sse_body(fx.TEXT))),
    "gemini": ("google", "gemini-2.5-flash", Reply.error(400, GEMINI_FIELD_VIOLATION), "temperature",
               Reply(body=gemini_data.GEMINI_THINK_TEXT)),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
async def test_a_refused_parameter_is_healed_on_the_same_key_and_remembered(provider_server, family):
    provider, model, refusal, key, good = FAMILIES[family]
    pool = ClientPool()
    provider_server.enqueue(refusal)
    provider_server.reply(good)
    try:
        assert await _answer(provider_server, provider, model, pool)
        first, healed = provider_server.requests
        assert _has(first.json, key) and not _has(healed.json, key)
        assert first.api_key == healed.api_key == "sk-heal-key-0001"
        # Remembered for the route: the next request leaves it out up front, in one request.
        await _answer(provider_server, provider, model, pool)
        assert len(provider_server.requests) == 3 and not _has(provider_server.requests[2].json, key)
    finally:
        await pool.aclose()


def _has(body: dict, key: str) -> bool:
    return key in body or key in body.get("generationConfig", {})


async def test_claude_sent_an_old_temperature_is_healed(provider_server):
    """A body with a sampling parameter (as a server's gateway or an older rule would add)
    is refused by API 2026-10-21 and healed; Claude's own requests never carry one."""
    pool = ClientPool()
    provider_server.enqueue(Reply.error(400, ANTHROPIC_TEMPERATURE))
    provider_server.reply(Reply.named_sse(anthropic_data.anthropic_events(
        [anthropic_data.a_text_block(0, ["He", "llo"])], "end_turn", 2)))
    request = ChatRequest(messages=[Message("user", "hi")], temperature=0.3)
    try:
        adapter = create_adapter("anthropic", api_key="sk-ant-heal", model="claude-opus-4-7",
                                 base_url=provider_server.url, timeout=10, clients=pool)
        adapter.capabilities = _with_temperature(adapter.capabilities)  # a rule that would send one
        chunks = [c async for c in normalized_stream(adapter, request)]
        await adapter.aclose()
    finally:
        await pool.aclose()
    assert chunks[-1].type == "done"
    first, healed = provider_server.requests
    assert "temperature" in first.json and "temperature" not in healed.json


def _with_temperature(capabilities):
    import dataclasses

    return dataclasses.replace(capabilities, sampling=frozenset({"temperature"}))


async def test_the_value_named_is_sent_instead(provider_server):
    pool = ClientPool()
    provider_server.enqueue(Reply.error(400, OPENAI_TOOLS_WITH_EFFORT))
    provider_server.reply(Reply(body=fx.sse_body(fx.TEXT)))
    request = ChatRequest(messages=[Message("user", "hi")], tools=fx.TOOLS, reasoning_effort="high")
    adapter = create_adapter("custom", api_key="k", model="gpt-5.6-terra", base_url=f"{provider_server.url}/v1",
                             timeout=10, clients=pool, endpoint_policy=EndpointPolicy(allow_private=True),
                             hints=_effort_hints())
    try:
        chunks = [c async for c in normalized_stream(adapter, request)]
    finally:
        await adapter.aclose()
        await pool.aclose()
    assert chunks[-1].type == "done"
    first, healed = provider_server.requests
    assert first.json["reasoning_effort"] == "high" and healed.json["reasoning_effort"] == "none"
    assert healed.json["tools"] == first.json["tools"]


def _effort_hints():
    from providers.model_capabilities import RouteHints

    return RouteHints(custom_reasoning_effort=True)


async def test_at_most_two_heals_then_the_refusal_is_the_failure(provider_server):
    pool = ClientPool()
    refusals = [{"error": {"message": f"Unsupported parameter: '{name}' is not supported with this model.",
                           "type": "invalid_request_error", "param": name, "code": "unsupported_parameter"}}
                for name in ("temperature", "reasoning_effort", "max_tokens")]
    provider_server.enqueue(*(Reply.error(400, body) for body in refusals))
    provider_server.reply(Reply(body=fx.sse_body(fx.TEXT)))
    request = ChatRequest(messages=[Message("user", "hi")], temperature=0.2, reasoning_effort="low",
                          max_output_tokens=50)
    adapter = create_adapter("custom", api_key="k", model="m", base_url=f"{provider_server.url}/v1", timeout=10,
                             clients=pool, endpoint_policy=EndpointPolicy(allow_private=True), hints=_effort_hints())
    try:
        chunks = [c async for c in normalized_stream(adapter, request)]
    finally:
        await adapter.aclose()
        await pool.aclose()
    assert len(provider_server.requests) == 3  # the request and two heals; the third refusal stands
    assert chunks[-1].type == "error" and chunks[-1].error.status == 400
    assert chunks[-1].error.kind == "request_refused"


async def test_a_refusal_the_heal_cannot_change_is_not_sent_again(provider_server):
    """The provider names a parameter the request does not carry: nothing to heal, no loop."""
    provider_server.reply(Reply.error(400, {"error": {"message": "Unsupported parameter: 'top_p' is not supported.",
                                                      "param": "top_p", "code": "unsupported_parameter"}}))
    adapter = create_adapter("custom", api_key="k", model="m", base_url=f"{provider_server.url}/v1", timeout=10,
                             endpoint_policy=EndpointPolicy(allow_private=True))
    try:
        chunks = [c async for c in normalized_stream(adapter, ASK)]
    finally:
        await adapter.aclose()
    assert len(provider_server.requests) == 1 and chunks[-1].type == "error"
