"""Talking to LLM APIs: contract types, adapters, normalization, error classification.

This package never imports `stream` or `bot` (a test enforces it).
"""

from providers.adapter import (
    StreamAdapter,
    create_adapter,
    normalized_stream,
)
from providers.identity import KNOWN_PROVIDERS, Provider, provider_of
from providers.types import (
    ChatRequest,
    FunctionCall,
    Message,
    ProcessedChunk,
    ProviderError,
    RawStreamChunk,
    Source,
    ThoughtLogEntry,
    ToolSpec,
    WebSearch,
)

__all__ = [
    "KNOWN_PROVIDERS",
    "ChatRequest",
    "FunctionCall",
    "Message",
    "Provider",
    "ProcessedChunk",
    "ProviderError",
    "RawStreamChunk",
    "Source",
    "StreamAdapter",
    "ThoughtLogEntry",
    "ToolSpec",
    "WebSearch",
    "create_adapter",
    "normalized_stream",
    "provider_of",
]
