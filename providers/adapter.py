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

from providers.types import ChatRequest, ProcessedChunk, ProviderError, RawStreamChunk

KNOWN_PROVIDERS: tuple[str, ...] = (
    "google",
    "anthropic",
    "openai",
    "openrouter",
    "deepseek",
    "zai",
    "custom",
)


@runtime_checkable
class StreamAdapter(Protocol):
    """What every provider adapter offers; per-stream state lives in what start_stream makes."""

    provider: str
    model: str

    def start_stream(self, request: ChatRequest) -> AsyncIterator[RawStreamChunk]:
        """Send the request and yield provider-native events."""

    def process_chunk(self, raw: RawStreamChunk) -> Sequence[ProcessedChunk]:
        """Synchronous and side-effect free outside the stream's own state object."""

    def handle_provider_error(self, exc: BaseException) -> ProviderError:
        """Classify any failure (SDK exception, timeout, connection reset)."""

    def create_error_description(self, error: ProviderError, locale: str) -> str:
        """The provider-specific headline for the error embed, in `locale`."""


# Each family lives in its own module exposing
# `create(provider, *, api_key, model, base_url=None, **options) -> StreamAdapter`;
# modules are imported on first use so a missing SDK never breaks the others.
ADAPTER_MODULES: dict[str, str] = {
    "google": "providers.gemini",
    "anthropic": "providers.anthropic_native",
    "openai": "providers.openai_compat",
    "openrouter": "providers.openai_compat",
    "deepseek": "providers.openai_compat",
    "zai": "providers.openai_compat",
    "custom": "providers.openai_compat",
}


def create_adapter(
    provider: str,
    *,
    api_key: str,
    model: str,
    base_url: str | None = None,
    **options: Any,
) -> StreamAdapter:
    """Build the adapter for `provider` (one of KNOWN_PROVIDERS)."""
    if provider not in KNOWN_PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}; known providers: {', '.join(KNOWN_PROVIDERS)}")
    try:
        module = importlib.import_module(ADAPTER_MODULES[provider])
    except ModuleNotFoundError as exc:
        if exc.name != ADAPTER_MODULES[provider]:
            raise
        raise ValueError(
            f"provider {provider!r} has no adapter in this build; "
            f"known providers: {', '.join(KNOWN_PROVIDERS)}"
        ) from None
    create: Callable[..., StreamAdapter] = module.create
    return create(provider, api_key=api_key, model=model, base_url=base_url, **options)


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
