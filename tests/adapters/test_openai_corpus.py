"""Every chat-completions corpus stream (openai/, openrouter/, deepseek/, zai/, groq/) replayed
through the chat-completions adapter and the real openai SDK: outcomes and error bodies.
OpenAI's own chat recordings are read as any chat-completions endpoint reads them (a
custom one): OpenAI itself now speaks the Responses API, whose recordings have their
own suite (test_openai_responses_corpus.py); OpenAI's error bodies go through it here. Cuts, transport
splits and fuzz of these streams run with every family's in test_robustness.py.

Expected text, reasoning, calls and usage come from an independent reading of each body
(stdlib `json`, choice 0, fields concatenated); the table adds what a reader decides
(finish reason, error class, serving backend).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import pytest

from providers.types import Usage
from tests.adapters.test_errors_classification import CORPUS_EXPECTED
from tests.support import data_openai_responses as rx
from tests.support.drive_adapter import served_outcome
from tests.support.env_corpus import CORPUS, corpus_errors, corpus_streams, requires_corpus
from tests.support.fake_provider_server import Reply

FOLDERS = {"openai": "custom", "openrouter": "openrouter", "deepseek": "deepseek", "zai": "zai",
           "groq": "custom"}
STREAMS = [name for folder in FOLDERS for name in corpus_streams(folder)]

# name -> (finish reason or None, error (type, retryable) or None, serving backend or None)
EXPECTED: dict[str, tuple[str | None, tuple[str, bool] | None, str | None]] = {
    "openai/chat_finish_length": ("length", None, None),
    "openai/chat_moderation_chunk_after_usage": ("stop", None, None),
    "openai/chat_n3_multiple_choices": ("stop", None, None),
    "openai/chat_refusal": ("stop", None, None),
    "openai/chat_refusal_logprobs": ("stop", None, None),
    "openai/chat_text_2024": ("stop", None, None),
    "openai/chat_text_content_logprobs": ("stop", None, None),
    "openai/chat_text_include_usage": ("stop", None, None),
    "openai/chat_tool_call_single": ("tool_calls", None, None),
    "openai/chat_tool_calls_parallel_gpt4o": ("tool_calls", None, None),
    "openai/chat_tool_calls_parallel_noargs": ("tool_calls", None, None),
    "openai/chat_tool_calls_parallel_pieces": ("tool_calls", None, None),
    "openrouter/fallback_models_xai": ("stop", None, "xAI"),
    # OpenRouter's documented error chunk: code "server_error" is an overload.
    "openrouter/midstream_error_finish_reason_error": (None, ("provider_overloaded", True), "OpenAI"),
    # A 400 "Token limit reached" error chunk after the length finish: not retryable.
    "openrouter/midstream_error_minimax": (None, ("api_error", False), "Minimax"),
    "openrouter/reasoning_details_anthropic": ("stop", None, "Google"),
    "openrouter/reasoning_openai_o3": ("stop", None, "OpenAI"),
    "openrouter/server_tool_advisor": ("stop", None, "OpenAI"),
    "openrouter/usage_empty_choices_bedrock": ("stop", None, "Amazon Bedrock"),
    "deepseek/chat_text_length": ("length", None, None),
    "deepseek/reasoner_reasoning_content": ("stop", None, None),
    "deepseek/reasoner_reasoning_content_vercel": ("stop", None, None),
    "deepseek/reasoner_tool_call": ("tool_calls", None, None),
    "zai/glm_thinking_reasoning_content": ("stop", None, None),
    # Groq's `event: error`: tool_use_failed with status_code 400 → api_error.
    "groq/midstream_event_error_tool_use_failed": (None, ("api_error", False), None),
}


@dataclass
class Reading:
    """What the body says, read with the standard library."""

    text: str = ""
    reasoning: str = ""
    encrypted: int = 0
    calls: dict[int, list[str]] = field(default_factory=dict)
    usage: dict | None = None

    def typed_usage(self) -> Usage | None:
        """The last usage object's counts; every corpus stream reports the total itself."""
        if self.usage is None:
            return None
        details = self.usage.get("completion_tokens_details") or {}
        prompt = self.usage.get("prompt_tokens_details") or {}
        return Usage(self.usage["prompt_tokens"], self.usage["completion_tokens"],
                     details.get("reasoning_tokens"), prompt.get("cached_tokens"), self.usage["total_tokens"])


def read_body(body: bytes) -> Reading:
    out = Reading()
    for event in re.split(r"\r?\n\r?\n", body.decode()):
        data = "\n".join(line[5:].lstrip(" ") if line[5:6] == " " else line[5:]
                         for line in event.splitlines() if line.startswith("data:"))
        if not data or data == "[DONE]":
            continue
        obj = json.loads(data)
        if obj.get("usage"):
            out.usage = obj["usage"]
        for choice in obj.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            out.text += (delta.get("content") or "") + (delta.get("refusal") or "")
            out.reasoning += delta.get("reasoning_content") or delta.get("reasoning") or ""
            out.encrypted += sum(1 for d in delta.get("reasoning_details") or []
                                 if d.get("type") == "reasoning.encrypted")
            for item in delta.get("tool_calls") or []:
                entry = out.calls.setdefault(item["index"], ["", ""])
                entry[0] += item.get("function", {}).get("name") or ""
                entry[1] += item.get("function", {}).get("arguments") or ""
    return out


def provider_of(name: str) -> str:
    return FOLDERS[name.split("/")[0]]


def body_of(name: str) -> bytes:
    assert CORPUS is not None
    return (CORPUS / f"{name}.sse").read_bytes()


@requires_corpus
def test_every_family_stream_has_an_expectation():
    assert set(STREAMS) == set(EXPECTED)


@requires_corpus
@pytest.mark.parametrize("name", STREAMS)
async def test_corpus_stream_outcome(provider_server, name):
    provider = provider_of(name)
    provider_server.reply(Reply.from_corpus(CORPUS, name))
    out = await served_outcome(provider_server, provider)
    reading = read_body(body_of(name))
    finish, error, serving = EXPECTED[name]
    assert out.text == reading.text
    assert out.raw_thoughts == reading.reasoning
    assert out.redacted == reading.encrypted
    assert out.serving == ({serving} if serving else set())
    if error is not None:
        assert out.last.type == "error"
        assert (out.error.type, out.error.retryable) == error
        assert out.error.provider == provider
        assert out.done is None
        return
    assert out.error is None
    assert out.last.type == "done"
    assert out.done.finish_reason == finish
    assert out.done.usage == reading.typed_usage()
    expected_calls = [(n, json.loads(a) if a.strip() else {}) for _, (n, a) in sorted(reading.calls.items())]
    assert [(c.name, c.args) for c in out.calls] == expected_calls
    assert not any(c.arguments_truncated for c in out.calls)
    assert all(c.id for c in out.calls)
    if provider == "deepseek" and out.calls:
        assert out.calls[0].provider_fields["reasoning_content"] == reading.reasoning
    # Calls come after all text and before done.
    kinds = [c.type for c in out.chunks if c.type != "text"]
    assert kinds == ["function_call"] * len(out.calls) + ["done"]


ERROR_PROVIDERS = {"openai": "openai", "openrouter": "openrouter", "deepseek": "deepseek", "zai": "zai",
                   "groq": "custom"}
FAMILY_ERRORS = [name for prefix in ERROR_PROVIDERS for name in corpus_errors(f"{prefix}_")]


@requires_corpus
@pytest.mark.parametrize("name", FAMILY_ERRORS)
async def test_corpus_error_body_through_the_sdk(provider_server, name):
    """The HTTP path (SDK status error → handle_provider_error) agrees with the body table."""
    short = name.removeprefix("errors/")
    provider = ERROR_PROVIDERS[short.split("_")[0]]
    sidecar = json.loads((CORPUS / f"{name}.json").read_text())
    provider_server.reply(Reply.from_corpus(CORPUS, name))
    out = await served_outcome(provider_server, provider)
    assert [c.type for c in out.chunks] == ["error"]
    assert (out.error.kind, out.error.type, out.error.retryable) == CORPUS_EXPECTED[short]
    assert out.error.status == sidecar["status"]
    assert out.error.provider == provider
    assert len(provider_server.requests) == 1


@requires_corpus
@pytest.mark.parametrize("name", FAMILY_ERRORS)
async def test_corpus_error_body_midstream_classifies_like_http(provider_server, name):
    """The same body as `data: {"error": ...}` after some text gives the same class; on
    OpenAI's Responses API as its in-stream `error` event (the error nested, as recorded)."""
    short = name.removeprefix("errors/")
    provider = ERROR_PROVIDERS[short.split("_")[0]]
    sidecar = json.loads((CORPUS / f"{name}.json").read_text())
    first = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": {"content": "Partial answer"}, "finish_reason": None}]}
    body = f"data: {json.dumps(first)}\n\ndata: {json.dumps(sidecar['body'])}\n\n".encode()
    if provider == "openai":
        body = rx.sse_body([rx.created(), *rx.message(0, ["Partial answer"])[:2],
                            rx.event("error", error=sidecar["body"]["error"])])
    provider_server.reply(Reply(body=body))
    out = await served_outcome(provider_server, provider)
    assert out.text == "Partial answer"
    assert (out.error.kind, out.error.type, out.error.retryable) == CORPUS_EXPECTED[short]
