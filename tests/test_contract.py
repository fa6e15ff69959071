"""The contract types and the adapter factory, as other modules and outside suites import them."""

from __future__ import annotations

import dataclasses

import pytest

import providers
from providers import (
    KNOWN_PROVIDERS,
    ChatRequest,
    FunctionCall,
    Message,
    ProcessedChunk,
    ProviderError,
    RawStreamChunk,
    ThoughtLogEntry,
    ToolSpec,
    create_adapter,
    normalized_stream,
)
from providers.types import Usage


def test_exports_and_provider_names():
    for name in ("RawStreamChunk", "ProcessedChunk", "FunctionCall", "ProviderError", "ThoughtLogEntry",
                 "ChatRequest", "Message", "ToolSpec", "create_adapter", "normalized_stream"):
        assert hasattr(providers, name)
    assert set(KNOWN_PROVIDERS) == {"google", "anthropic", "openai", "openrouter", "deepseek", "zai", "custom"}


@pytest.mark.parametrize("cls", [RawStreamChunk, ProcessedChunk, FunctionCall, ProviderError, ThoughtLogEntry,
                                 Usage])
def test_per_chunk_types_are_slotted_dataclasses(cls):
    assert dataclasses.is_dataclass(cls)
    assert hasattr(cls, "__slots__")


def test_defaults_match_the_spec():
    call = FunctionCall("f", {})
    assert (call.id, call.thought_signature, call.provider_fields, call.arguments_truncated) == (None, None, {}, False)
    assert FunctionCall("g", {}).provider_fields is not call.provider_fields  # no shared mutable default
    err = ProviderError("rate_limit", "slow", True, "429")
    assert (err.status, err.provider, err.original_error, err.details) == (None, None, None, None)
    chunk = ProcessedChunk("text", content="hi")
    assert (chunk.function_call, chunk.error, chunk.thoughts, chunk.serving_provider) == (None,) * 4
    assert (chunk.finish_reason, chunk.usage) == (None, None)
    assert Usage() == Usage(None, None, None, None, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Usage(1, 2).total_tokens = 3  # type: ignore[misc]
    request = ChatRequest([Message("user", "hi")])
    assert (request.system, tuple(request.tools), request.max_output_tokens) == (None, (), None)
    assert ToolSpec("t", "d", {"type": "object"}).parameters == {"type": "object"}


@pytest.mark.parametrize(
    ("cls", "args"),
    [(ProcessedChunk, ("thinking",)), (ProviderError, ("unknown", "m", False, None)), (ThoughtLogEntry, ("mood", "x", "p"))],
)
def test_closed_vocabularies_are_enforced(cls, args):
    with pytest.raises(ValueError):
        cls(*args)


def test_finish_reason_is_the_contract_vocabulary_not_a_provider_one():
    assert ProcessedChunk("done", finish_reason="tool_calls").finish_reason == "tool_calls"
    with pytest.raises(ValueError, match="end_turn"):
        ProcessedChunk("done", finish_reason="end_turn")  # type: ignore[arg-type]


def test_unknown_provider_is_a_clear_value_error():
    with pytest.raises(ValueError) as info:
        create_adapter("skynet", api_key="sk-canary-4242", model="m")
    message = str(info.value)
    assert "skynet" in message and all(name in message for name in KNOWN_PROVIDERS)
    assert "sk-canary-4242" not in message


@pytest.mark.parametrize("provider", KNOWN_PROVIDERS)
def test_every_provider_has_an_adapter_with_the_contract(provider):
    adapter = create_adapter(provider, api_key="sk-contract", model="m", base_url="http://127.0.0.1:9/v1")
    for method in ("start_stream", "process_chunk", "handle_provider_error"):
        assert callable(getattr(adapter, method))
    assert "sk-contract" not in repr(adapter)


async def test_normalized_stream_yields_a_refused_connection_as_an_error_chunk():
    adapter = create_adapter("openai", api_key="sk-x", model="m", base_url="http://127.0.0.1:9/v1", timeout=5)
    chunks = [c async for c in normalized_stream(adapter, ChatRequest([Message("user", "hi")]))]
    assert [c.type for c in chunks] == ["error"]
    assert chunks[0].error.provider == "openai"
