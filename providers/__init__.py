"""Talking to LLM APIs: contract types, adapters, normalization, error classification.

This package never imports `stream` or `bot` (a test enforces it).
"""

from providers.adapter import (
    KNOWN_PROVIDERS,
    StreamAdapter,
    create_adapter,
    normalized_stream,
)
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
]
