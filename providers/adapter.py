"""The adapter contract and the one loop that turns a provider stream into chunks.

Design note: `process_chunk` returns a *sequence* of
`ProcessedChunk`s. One provider event can carry visible text, several finished
parallel tool calls and the finish reason at once, and a keep-alive carries nothing;
a single return value would force either dropping data or hidden buffering.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from providers.capabilities import capabilities_of
from providers.identity import KNOWN_PROVIDERS, Provider, provider_of
from providers.model_capabilities import NO_HINTS, Api, ModelCapabilities, RouteHints
from providers.types import ChatRequest, ProcessedChunk, ProviderError, RawStreamChunk


@runtime_checkable
class StreamAdapter(Protocol):
    """What every provider adapter offers; per-stream state lives in what start_stream makes."""

    provider: Provider
    model: str
    capabilities: ModelCapabilities  # what the model takes, asked once when the adapter was made

    def start_stream(self, request: ChatRequest) -> AsyncIterator[RawStreamChunk]:
        """Send the request and yield provider-native events."""

    def process_chunk(self, raw: RawStreamChunk) -> Sequence[ProcessedChunk]:
        """Synchronous and side-effect free outside the stream's own state object."""

    def handle_provider_error(self, exc: BaseException) -> ProviderError:
        """Classify any failure (SDK exception, timeout, connection reset)."""


# The adapter of each wire API: a module exposing
# `create(provider, *, api_key, model, base_url=None, **options) -> StreamAdapter`. Imported
# on first use, when a request is made: an idle bot loads no provider SDK, and a missing
# SDK never breaks the others.
ADAPTER_MODULES: dict[Api, str] = {
    "generate_content": "providers.gemini.adapter",
    "messages": "providers.anthropic_native.adapter",
    "responses": "providers.openai_responses.adapter",
    "chat_completions": "providers.openai_compat.adapter",
}


def create_adapter(
    provider: Provider | str,
    *,
    api_key: str,
    model: str,
    base_url: str | None = None,
    hints: RouteHints = NO_HINTS,
    **options: Any,
) -> StreamAdapter:
    """Build the adapter for `provider` (one of KNOWN_PROVIDERS) serving `model`: the one of
    the wire API its capabilities name (`providers.capabilities`), which it is handed."""
    identity = provider_of(provider)
    capabilities = capabilities_of(identity, model, hints)
    name = ADAPTER_MODULES[capabilities.api]
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        raise ValueError(
            f"provider {identity.value!r} has no adapter in this build; "
            f"known providers: {', '.join(KNOWN_PROVIDERS)}"
        ) from None
    create: Callable[..., StreamAdapter] = module.create
    return create(identity, api_key=api_key, model=model, base_url=base_url, capabilities=capabilities,
                  **options)


async def normalized_stream(
    adapter: StreamAdapter, request: ChatRequest
) -> AsyncIterator[ProcessedChunk]:
    """Yield normalized chunks; a provider failure is yielded as an `error` chunk, never raised."""
    try:
        async for raw in adapter.start_stream(request):
            for chunk in adapter.process_chunk(raw):
                yield chunk
                if chunk.type == "error":
                    return
    except Exception as exc:  # noqa: BLE001 - the contract: no provider failure escapes
        yield ProcessedChunk(type="error", error=adapter.handle_provider_error(exc))
