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
    END_OF_BODY,
    FAILURE,
    ResponsesStream,
    fail,
    new_stream,
    process_event,
)
from providers.openai_responses.request import build_body, untyped_arguments
from providers.streaming import SSEDecoder
from providers.types import ChatRequest, ProcessedChunk, RawStreamChunk


class OpenAIResponsesAdapter(OpenAISdkAdapter):
    """One configured model on one Responses endpoint; holds no per-stream state."""

    async def start_stream(self, request: ChatRequest) -> AsyncIterator[RawStreamChunk]:
        """Send the request; yield one RawStreamChunk per SSE event, then an end marker.

        Every chunk carries the same `metadata` dict holding this stream's state, so
        `process_chunk` stays a function of its argument.
        """
        provider = self.provider
        shared = {"stream": new_stream(provider)}
        arguments = untyped_arguments(build_body(request, self.capabilities))
        manager, response = await self._open(self._sdk().responses.with_streaming_response.create, arguments)
        try:
            decoder = SSEDecoder()
            try:
                read = self._paced(self._body(response.http_response))
                while piece := await read():
                    for event in decoder.feed(piece):
                        yield RawStreamChunk(event, provider, shared)
            except Exception as exc:  # noqa: BLE001 - becomes an error chunk after what was delivered
                yield RawStreamChunk((FAILURE, exc), provider, shared)
                return
            for event in decoder.finish():
                yield RawStreamChunk(event, provider, shared)
            yield RawStreamChunk(END_OF_BODY, provider, shared)
        finally:
            await manager.__aexit__(None, None, None)

    def process_chunk(self, raw: RawStreamChunk) -> Sequence[ProcessedChunk]:
        """Synchronous; all state it touches is the stream's own (`raw.metadata["stream"]`)."""
        state = (raw.metadata or {}).get("stream")
        if not isinstance(state, ResponsesStream):
            raise ValueError("process_chunk needs a RawStreamChunk made by this adapter's start_stream")
        if raw.data[0] == FAILURE:
            return fail(state, self.handle_provider_error(raw.data[1]))
        return process_event(state, raw.data)


create = OpenAIResponsesAdapter.create
"""Registry entry point (providers.adapter.create_adapter).

Options as the chat-completions adapter's (`providers/openai_compat/adapter.py::create`):
`timeout`, `connect_timeout`, `default_headers`, `endpoint_policy` (custom only),
`clients`; others are ignored so one option set can be passed to any provider.
"""
