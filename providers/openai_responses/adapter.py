"""The Responses API adapter: OpenAI itself, and custom endpoints the operator switched to it.

The shared OpenAI SDK client (`providers/openai_compat/sdk.py`: keyless, the key per
request, healed sends) sends `POST /responses`; the 200 body is read as raw bytes,
decoded here and normalized by the pure `events.process_event`, as the chat-completions
adapter reads its own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from providers.openai_compat.sdk import OpenAISdkAdapter
from providers.openai_responses.events import (
    ResponsesStream,
    fail,
    new_stream,
    process_event,
)
from providers.openai_responses.request import build_body, untyped_arguments
from providers.streaming import READ_FAILURE
from providers.types import ChatRequest, ProcessedChunk, RawStreamChunk


class OpenAIResponsesAdapter(OpenAISdkAdapter):
    """One configured model on one Responses endpoint; holds no per-stream state."""

    def start_stream(self, request: ChatRequest) -> AsyncIterator[RawStreamChunk]:
        """The request sent, its body as one RawStreamChunk per SSE event, then an end marker
        (`OpenAISdkAdapter._relay`)."""
        arguments = untyped_arguments(build_body(request, self.capabilities))
        return self._relay(self._sdk().responses.with_streaming_response.create, arguments,
                           {"stream": new_stream(self.provider)})

    def process_chunk(self, raw: RawStreamChunk) -> Sequence[ProcessedChunk]:
        """Synchronous; all state it touches is the stream's own (`raw.metadata["stream"]`)."""
        state = (raw.metadata or {}).get("stream")
        if not isinstance(state, ResponsesStream):
            raise ValueError("process_chunk needs a RawStreamChunk made by this adapter's start_stream")
        if raw.data[0] == READ_FAILURE:
            return fail(state, self.handle_provider_error(raw.data[1]))
        return process_event(state, raw.data)


create = OpenAIResponsesAdapter.create
"""Registry entry point (providers.adapter.create_adapter).

Options as the chat-completions adapter's (`providers/openai_compat/adapter.py::create`):
`timeout`, `connect_timeout`, `default_headers`, `endpoint_policy` (custom only),
`clients`; others are ignored so one option set can be passed to any provider.
"""
