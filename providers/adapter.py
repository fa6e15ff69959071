"""The adapter contract and the one loop that turns a provider stream into chunks.

Design note (an improvement on spec §3): `process_chunk` returns a *sequence* of
`ProcessedChunk`s. One provider event can carry visible text, several finished
parallel tool calls and the finish reason at once, and a keep-alive carries nothing;
a single return value would force either dropping data or hidden buffering.
"""

from __future__ import annotations

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
        ...

    def process_chunk(self, raw: RawStreamChunk) -> Sequence[ProcessedChunk]:
        """Synchronous and side-effect free outside the stream's own state object."""
        ...

    def handle_provider_error(self, exc: BaseException) -> ProviderError:
        """Classify any failure (SDK exception, timeout, connection reset)."""
        ...

    def create_error_description(self, error: ProviderError, locale: str) -> str:
        """The provider-specific headline for the error embed, in `locale`."""
        ...


AdapterFactory = Callable[..., StreamAdapter]

# Filled by the provider modules as they register themselves (see providers/registry.py).
_FACTORIES: dict[str, AdapterFactory] = {}


def register_adapter(provider: str, factory: AdapterFactory) -> None:
    if provider not in KNOWN_PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}; known: {', '.join(KNOWN_PROVIDERS)}")
    _FACTORIES[provider] = factory


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
    factory = _FACTORIES.get(provider)
    if factory is None:
        raise ValueError(
            f"provider {provider!r} has no adapter installed in this build; "
            f"known providers: {', '.join(KNOWN_PROVIDERS)}"
        )
    return factory(api_key=api_key, model=model, base_url=base_url, **options)


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
