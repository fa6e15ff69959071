"""Claude under API version 2026-10-21, the version the pinned anthropic SDK sends: a fake
that enforces what Anthropic documents for it (tests/support/rules_anthropic.py) refuses
the requests the rules of before made, and takes the ones the bot makes now.

The old rules are expressed as capabilities (`ModelCapabilities`, which the request
builder reads): "Claude takes a temperature" (`sampling`) and "adaptive thinking needs no
display" (`Reasoning.summarized`). Each request goes through the real anthropic SDK to the
replay server. A refused parameter is healed by the adapter (providers/healing.py: sent
again without it), so the old body's refusal is read where it happened: the fake's verdict
on the first request the server recorded, and the SDK's own error when called directly.
"""

from __future__ import annotations

import dataclasses
import json

import anthropic
import pytest

from providers.adapter import normalized_stream
from providers.anthropic_native import adapter as anthropic_adapter
from providers.capabilities import capabilities_of
from providers.model_capabilities import TEMPERATURE, ModelCapabilities
from providers.types import ChatRequest, DocumentPart, FunctionCall, Message, TextPart, ToolSpec
from tests.support.data_anthropic import ANTHROPIC_THINK_TOOLS
from tests.support.drive_adapter import StreamOutcome, summarize
from tests.support.fake_provider_server import ProviderReplayServer, RecordedRequest, Reply
from tests.support.rules_anthropic import SAMPLING, AnthropicRules, omits_thinking_by_default

KEY = "sk-ant-test-key-0000"
WARM = ChatRequest(messages=[Message("user", "hello")], temperature=0.5)
THINK = ChatRequest(messages=[Message("user", "weather in Paris and Tokyo?")], reasoning_effort="high")
THOUGHT = "The user wants weather for two cities."


@pytest.fixture
async def claude():
    """A replay server that answers like the Messages API at version 2026-10-21."""
    rules = AnthropicRules()
    async with ProviderReplayServer(rules=[rules]) as server:
        server.reply(Reply.named_sse(ANTHROPIC_THINK_TOOLS))
        yield server, rules


async def answer(server: ProviderReplayServer, capabilities: ModelCapabilities, request: ChatRequest) -> StreamOutcome:
    """One request built with `capabilities`, through the real SDK and the Anthropic adapter."""
    adapter = anthropic_adapter.create("anthropic", api_key=KEY, model=capabilities.model, base_url=server.url,
                                       capabilities=capabilities, timeout=10)
    try:
        return summarize([chunk async for chunk in normalized_stream(adapter, request)])
    finally:
        await adapter.aclose()


def verdict(rules: AnthropicRules, recorded: RecordedRequest) -> str | None:
    """The fake's refusal message for a recorded request; None when it took it."""
    refused = rules.refusal(recorded.path, recorded.json)
    return None if refused is None else anthropic_message(refused)


def anthropic_message(reply: Reply) -> str:
    body = json.loads(reply.body)
    assert reply.status == 400 and body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    return body["error"]["message"]


def taking_temperature(model: str) -> ModelCapabilities:
    """The rule of before: Claude took a temperature (sent in `extra_body`: the SDK has none)."""
    return dataclasses.replace(capabilities_of("anthropic", model), sampling=frozenset({TEMPERATURE}))


# ---- sampling parameters ------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "value"), [("temperature", 1.0), ("temperature", 0.5), ("top_p", 0.9),
                                             ("top_k", 40)])
async def test_the_sdk_sends_2026_10_21_and_any_sampling_parameter_is_refused(claude, name, value):
    """Even at its default (temperature 1.0): the SDK, called directly, raises the API's 400."""
    server, _ = claude
    client = anthropic.AsyncAnthropic(api_key=KEY, base_url=server.url, max_retries=0)
    try:
        with pytest.raises(anthropic.BadRequestError) as refused:
            await client.messages.create(model="claude-sonnet-4-5", max_tokens=64, stream=True,
                                         messages=[{"role": "user", "content": "hi"}], extra_body={name: value})
    finally:
        await client.close()
    assert refused.value.status_code == 400
    assert refused.value.body["error"] == {"type": "invalid_request_error",
                                           "message": f"{name}: Extra inputs are not permitted"}
    headers = {key.lower(): value for key, value in server.requests[-1].headers.items()}
    assert headers["anthropic-version"] == "2026-10-21"


@pytest.mark.parametrize("model", ["claude-sonnet-4-5-20250929", "claude-3-5-haiku-latest", "claude-opus-4-6"])
async def test_the_old_temperature_is_refused_and_today_none_is_sent(claude, model):
    server, rules = claude
    old = await answer(server, taking_temperature(model), WARM)
    first, healed = server.requests  # refused, then sent again without it
    assert first.json["temperature"] == 0.5
    assert verdict(rules, first) == "temperature: Extra inputs are not permitted"
    assert "temperature" not in healed.json and verdict(rules, healed) is None
    assert old.error is None  # the heal saved this answer; every first request of a route was refused
    server.requests.clear()
    today = await answer(server, capabilities_of("anthropic", model), WARM)
    [sent] = server.requests
    assert today.error is None and not set(SAMPLING) & set(sent.json) and verdict(rules, sent) is None


def test_claude_takes_no_sampling_parameter_on_any_model():
    for model in ("claude-2.1", "claude-3-haiku-20240307", "claude-3-7-sonnet-latest", "claude-sonnet-4-5",
                  "claude-opus-4-7", "claude-sonnet-5", "claude-mythos-preview", "my-gateway-alias"):
        capabilities = capabilities_of("anthropic", model)
        assert capabilities.sampling == frozenset() and not capabilities.takes_temperature, model


# ---- thinking shown -----------------------------------------------------------------------------
def without_display(model: str) -> ModelCapabilities:
    """The rule of before: adaptive thinking was sent without `display`."""
    capabilities = capabilities_of("anthropic", model)
    assert capabilities.reasoning is not None
    return dataclasses.replace(capabilities, reasoning=dataclasses.replace(capabilities.reasoning, summarized=False))


@pytest.mark.parametrize("model", ["claude-opus-4-7", "claude-sonnet-5", "claude-fable-5-1", "claude-mythos-preview"])
async def test_thinking_without_display_streams_blank_from_opus_4_7_and_is_shown_today(claude, model):
    server, rules = claude
    old = await answer(server, without_display(model), THINK)
    assert server.requests[-1].json["thinking"] == {"type": "adaptive"}
    assert old.error is None and old.raw_thoughts == ""  # the reasoning the member asked for: blank
    assert [kind for kind, _ in old.thoughts if kind == "signature"]  # only its signature came
    today = await answer(server, capabilities_of("anthropic", model), THINK)
    assert server.requests[-1].json["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert today.raw_thoughts == THOUGHT
    assert verdict(rules, server.requests[-1]) is None


@pytest.mark.parametrize("model", ["claude-opus-4-6", "claude-sonnet-4-5-20250929"])
async def test_earlier_models_show_their_thinking_by_default(claude, model):
    """Before Opus 4.7 the default display is the summary: the fake does not blank it."""
    server, _ = claude
    assert not omits_thinking_by_default(model)
    out = await answer(server, capabilities_of("anthropic", model), THINK)
    assert out.raw_thoughts == THOUGHT


# ---- message content ------------------------------------------------------------------------------
PDF = DocumentPart("application/pdf", b"%PDF-1.4 fixture", "report.pdf", "The report says 42.")


@pytest.mark.parametrize(("messages", "refused"), [
    ([{"role": "user", "content": "read this"},
      {"role": "assistant", "content": [{"type": "document", "title": "report.pdf",
                                         "source": {"type": "text", "media_type": "text/plain", "data": "42"}}]},
      {"role": "user", "content": "and?"}],
     "messages.1.content.0: document blocks are not permitted in assistant messages"),
    ([{"role": "user", "content": [{"type": "text", "text": "as you said",
                                    "citations": [{"type": "char_location", "cited_text": "42",
                                                   "document_index": 0, "document_title": "report.pdf",
                                                   "start_char_index": 0, "end_char_index": 2}]}]}],
     "messages.0.content.0: citations are not permitted on text blocks in user messages"),
])
async def test_documents_in_assistant_turns_and_citations_on_user_text_are_refused(claude, messages, refused):
    server, _ = claude
    client = anthropic.AsyncAnthropic(api_key=KEY, base_url=server.url, max_retries=0)
    try:
        with pytest.raises(anthropic.BadRequestError) as error:
            await client.messages.create(model="claude-sonnet-4-5", max_tokens=64, messages=messages, stream=True)
    finally:
        await client.close()
    assert error.value.body["error"]["message"].startswith(refused)


async def test_the_bots_history_never_puts_a_document_in_an_assistant_turn_nor_cites_in_a_user_one(claude):
    """A PDF in the history's user turn goes as a document block; one in an assistant turn
    (an answer that quoted a file) as its text; user text never carries citations."""
    server, rules = claude
    history = ChatRequest(messages=[
        Message("user", [TextPart("Attached PDF: report.pdf"), PDF, TextPart("what does it say?")]),
        Message("assistant", [TextPart("It says:"), PDF], tool_calls=[FunctionCall("lookup", {"q": "42"}, id="toolu_9")]),
        Message("tool", "42 is the answer", tool_call_id="toolu_9", name="lookup"),
        Message("user", "thanks"),
    ], tools=[ToolSpec("lookup", "Look a fact up", {"type": "object", "properties": {"q": {"type": "string"}}})])
    out = await answer(server, capabilities_of("anthropic", "claude-sonnet-4-5"), history)
    [sent] = server.requests
    assert out.error is None and verdict(rules, sent) is None
    user, assistant, *_ = sent.json["messages"]
    assert [block["type"] for block in user["content"]] == ["text", "document", "text"]
    assert [block["type"] for block in assistant["content"]] == ["text", "tool_use"]
    assert "The report says 42." in assistant["content"][0]["text"]
    assert all("citations" not in block for turn in sent.json["messages"] if turn["role"] == "user"
               for block in turn["content"])
