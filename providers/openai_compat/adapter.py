"""The chat-completions adapter: OpenRouter, DeepSeek, Z.ai and custom endpoints.

The shared OpenAI SDK client (`providers/openai_compat/sdk.py`) sends the request; the
200 body is read as raw bytes, decoded here and normalized by the pure
`normalize.process_event`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import openai

from providers.openai_compat.normalize import (
    fail,
    new_stream_state,
    process_event,
)
from providers.openai_compat.request import build_request, searches_here, untyped_arguments
from providers.openai_compat.sdk import OpenAISdkAdapter
from providers.streaming import READ_FAILURE
from providers.types import ChatRequest, ProcessedChunk, RawStreamChunk


class OpenAICompatAdapter(OpenAISdkAdapter):
    """One configured model on one chat-completions endpoint; holds no per-stream state."""

    def start_stream(self, request: ChatRequest) -> AsyncIterator[RawStreamChunk]:
        """The request sent, its body as one RawStreamChunk per SSE event, then an end marker
        (`OpenAISdkAdapter._relay`)."""
        state = new_stream_state(self.capabilities, request, verbatim_tool_calling=self.verbatim_tool_calling,
                                 web_search=searches_here(self.capabilities, request))
        arguments = untyped_arguments(build_request(self.capabilities, request), openai.omit)
        return self._relay(self._sdk().chat.completions.with_streaming_response.create, arguments, {"stream": state})

    def process_chunk(self, raw: RawStreamChunk) -> Sequence[ProcessedChunk]:
        """Synchronous; all state it touches is the stream's own (`raw.metadata["stream"]`)."""
        state = (raw.metadata or {}).get("stream")
        if state is None:
            raise ValueError("process_chunk needs a RawStreamChunk made by this adapter's start_stream")
        if raw.data[0] == READ_FAILURE:
            return fail(state, self.handle_provider_error(raw.data[1]))
        return process_event(state, raw.data)


create = OpenAICompatAdapter.create
"""Registry entry point (providers.adapter.create_adapter).

Options: `timeout` (seconds, inactivity and first response; default 120, None for no
bound), `connect_timeout`, `verbatim_tool_calling` (custom only), `default_headers`,
`endpoint_policy` (custom only: an `EndpointPolicy`, e.g. `EndpointPolicy(allow_private=True)`
for ALLOW_PRIVATE_ENDPOINTS; by default only public addresses are reached and no
`reasoning_effort` is sent), `clients` (a `ClientPool` whose shared HTTP client the SDK
client uses, sending through the pool's transport: aiohttp or httpx2, providers/http_transport.py).
Others are ignored so one option set can be passed to any provider.
"""
