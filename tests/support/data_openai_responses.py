"""Streams in the OpenAI Responses wire format, written for the tests.

Shapes follow OpenAI's streaming events reference and the SDK's event types (openai
3.57.0, `openai/types/responses/*_event.py`): each event is `event: <type>` plus
`data: <json>` whose `type` repeats the name, numbered by `sequence_number`; a response
opens with `response.created` and ends with exactly one of `response.completed`,
`response.incomplete` or `response.failed` (an `error` event may come first). The
recorded streams are in tests/fixtures/openai_responses; these cover what no recording
shows (an incomplete response, refusals, raw reasoning, parallel calls) and seed the
robustness suite's cuts and fuzz. The chat end-to-end tests script whole replies with
`responses_stream`, as `data_openai.openai_stream` does for chat completions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from providers.types import Source
from tests.support.data_openai import chunks_of
from tests.support.fake_provider_server import Reply

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openai_responses"
RESPONSE_ID = "resp_test"
USAGE = {"input_tokens": 12, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 345,
         "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 357}


def recorded(name: str) -> bytes:
    """A recorded stream of tests/fixtures/openai_responses (see its SOURCES.md)."""
    return (FIXTURES / f"{name}.sse").read_bytes()


def cited_once(name: str) -> list[Source]:
    """The pages a recorded stream's `url_citation` annotations cite, each once, first
    citation first (read with plain json: the tests' own oracle)."""
    kept: dict[str, Source] = {}
    for event in recorded(name).split(b"\n"):
        if event.startswith(b"data: ") and b'"response.output_text.annotation.added"' in event:
            annotation = json.loads(event[6:])["annotation"]
            if annotation.get("type") == "url_citation":
                kept.setdefault(annotation["url"], Source(annotation["url"], annotation.get("title")))
    return list(kept.values())


def response(status: str = "in_progress", **fields: Any) -> dict[str, Any]:
    """The response object the lifecycle events carry."""
    return {"id": RESPONSE_ID, "object": "response", "created_at": 1700000000, "status": status,
            "model": "gpt-test", "output": [], "error": None, "incomplete_details": None, "usage": None,
            **fields}


def event(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **fields}


def created() -> dict[str, Any]:
    return event("response.created", response=response())


def completed(usage: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    return event("response.completed", response=response("completed", usage=usage, **fields))


def incomplete(reason: str, usage: dict[str, Any] | None = None) -> dict[str, Any]:
    return event("response.incomplete",
                 response=response("incomplete", incomplete_details={"reason": reason}, usage=usage))


def usage(input_tokens: int, output_tokens: int, *, reasoning: int = 0, cached: int = 0) -> dict[str, Any]:
    return {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": reasoning},
            "total_tokens": input_tokens + output_tokens}


def message(index: int, pieces: list[str], item: str = "msg_1", kind: str = "output_text") -> list[dict[str, Any]]:
    """One message item: added, its text (or refusal) deltas, done."""
    delta = "response.output_text.delta" if kind == "output_text" else "response.refusal.delta"
    text = "".join(pieces)
    part = {"type": kind, "annotations": [], "text": text} if kind == "output_text" else {"type": kind, "refusal": text}
    return [
        event("response.output_item.added", output_index=index,
              item={"id": item, "type": "message", "status": "in_progress", "role": "assistant", "content": []}),
        *(event(delta, item_id=item, output_index=index, content_index=0, delta=piece) for piece in pieces),
        event("response.output_item.done", output_index=index,
              item={"id": item, "type": "message", "status": "completed", "role": "assistant", "content": [part]}),
    ]


def reasoning(index: int, summary: list[list[str]], item: str = "rs_1", encrypted: str | None = "gAAAA-enc-1",
              raw: list[str] = ()) -> list[dict[str, Any]]:
    """One reasoning item: its summary parts streamed (each a list of deltas), raw reasoning
    text where `raw`, and its encrypted content whole only when done (as OpenAI sends it)."""
    added = {"id": item, "type": "reasoning", "summary": []}
    done: dict[str, Any] = {"id": item, "type": "reasoning",
                            "summary": [{"type": "summary_text", "text": "".join(part)} for part in summary]}
    if encrypted is not None:
        added["encrypted_content"] = encrypted[: len(encrypted) // 2]
        done["encrypted_content"] = encrypted
    events = [event("response.output_item.added", output_index=index, item=added)]
    for number, part in enumerate(summary):
        events.append(event("response.reasoning_summary_part.added", item_id=item, output_index=index,
                            summary_index=number, part={"type": "summary_text", "text": ""}))
        events += [event("response.reasoning_summary_text.delta", item_id=item, output_index=index,
                         summary_index=number, delta=piece) for piece in part]
        events.append(event("response.reasoning_summary_part.done", item_id=item, output_index=index,
                            summary_index=number, part={"type": "summary_text", "text": "".join(part)}))
    events += [event("response.reasoning_text.delta", item_id=item, output_index=index, content_index=0,
                     delta=piece) for piece in raw]
    events.append(event("response.output_item.done", output_index=index, item=done))
    return events


def function_call(index: int, call_id: str, name: str, pieces: list[str], item: str = "fc_1") -> list[dict[str, Any]]:
    """One function_call item: added, its argument pieces, done with the whole arguments."""
    whole = "".join(pieces)
    return [
        event("response.output_item.added", output_index=index,
              item={"id": item, "type": "function_call", "status": "in_progress", "arguments": "",
                    "call_id": call_id, "name": name}),
        *(event("response.function_call_arguments.delta", item_id=item, output_index=index, delta=piece)
          for piece in pieces),
        event("response.function_call_arguments.done", item_id=item, output_index=index, arguments=whole),
        event("response.output_item.done", output_index=index,
              item={"id": item, "type": "function_call", "status": "completed", "arguments": whole,
                    "call_id": call_id, "name": name}),
    ]


def web_search(index: int, query: str, item: str = "ws_1") -> list[dict[str, Any]]:
    return [
        event("response.output_item.added", output_index=index,
              item={"id": item, "type": "web_search_call", "status": "in_progress"}),
        event("response.web_search_call.searching", output_index=index, item_id=item),
        event("response.output_item.done", output_index=index,
              item={"id": item, "type": "web_search_call", "status": "completed",
                    "action": {"type": "search", "query": query}}),
    ]


def citation(index: int, url: str, title: str, item: str = "msg_1") -> dict[str, Any]:
    return event("response.output_text.annotation.added", item_id=item, output_index=index, content_index=0,
                 annotation_index=0, annotation={"type": "url_citation", "url": url, "title": title,
                                                 "start_index": 0, "end_index": 1})


def sse_body(events: list[Any]) -> bytes:
    """Events as the API frames them: `event: <type>` and `data: <json>`, numbered in order;
    a raw string is written as the data of an unnamed event."""
    out = []
    for number, payload in enumerate(events):
        if isinstance(payload, str):
            out.append(f"data: {payload}\n\n")
            continue
        numbered = {**payload, "sequence_number": number}
        out.append(f"event: {payload['type']}\ndata: {json.dumps(numbered)}\n\n")
    return "".join(out).encode()


# ---- the robustness suite's own streams -------------------------------------------------------------
TEXT = [created(), *message(0, ["Hel", "lo ", "there."]), completed(usage(9, 3))]
REASONING_CALLS = [
    created(),
    *reasoning(0, [["The user wants ", "weather."], ["Two cities: call twice."]]),
    *function_call(1, "call_paris", "get_weather", ['{"ci', 'ty": "Par', 'is"}'], item="fc_1"),
    *function_call(2, "call_rome", "get_weather", ['{"city": ', '"Rome"}'], item="fc_2"),
    completed(usage(40, 30, reasoning=18, cached=8)),
]
LENGTH = [created(), *reasoning(0, [["Counting."]]), *message(1, ["One, two, ", "three,"]),
          incomplete("max_output_tokens", usage(5, 16, reasoning=8))]
REFUSAL = [created(), *message(0, ["I can't ", "help with that."], kind="refusal"), completed(usage(7, 5))]
RAW_REASONING = [created(), *reasoning(0, [], encrypted=None, raw=["Think ", "twice."]),
                 *message(1, ["Done."]), completed(usage(4, 6, reasoning=3))]
SEARCH = [
    created(),
    *reasoning(0, [["Searching."]], item="rs_1"),
    *web_search(1, "weather paris today"),
    *reasoning(2, [], item="rs_2"),
    event("response.output_item.added", output_index=3,
          item={"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []}),
    event("response.output_text.delta", item_id="msg_1", output_index=3, content_index=0, delta="Sunny ("),
    citation(3, "https://weather.example/paris", "Paris weather"),
    event("response.output_text.delta", item_id="msg_1", output_index=3, content_index=0, delta="weather.example)."),
    completed(usage(50, 9), tool_usage={"web_search": {"num_requests": 1}}),
]
MIDSTREAM_ERROR = [
    created(), *message(0, ["Partial "])[:2],
    event("error", code="server_error", message="The server had an error while processing your request.",
          param=None),
]


# ---- whole scripted replies (end-to-end tests) --------------------------------------------------------------
def responses_events(pieces: list[str], *, thinking: list[str] = (), finish: str | None = "stop",
                     call: tuple[str, str, str] | None = None) -> list[dict[str, Any]]:
    """A whole response: a reasoning summary when `thinking`, the text `pieces`, a function
    call `(call_id, name, arguments)` after them, then the end: completed ("stop"),
    incomplete at the output cap ("length"), or none (`finish=None`)."""
    events: list[dict[str, Any]] = [created()]
    index = 0
    if thinking:
        events += reasoning(index, [list(thinking)])
        index += 1
    if pieces:
        events += message(index, list(pieces))
        index += 1
    if call is not None:
        events += function_call(index, *call[:2], [call[2]])
    if finish == "stop":
        events.append(completed(USAGE))
    elif finish == "length":
        events.append(incomplete("max_output_tokens", USAGE))
    return events


def responses_stream(text: str, *, piece: int = 40, event_delay: float = 0.0, thinking: list[str] = (),
                     **options: Any) -> Reply:
    """`text` streamed in `piece`-character deltas, completed with usage (12 in, 345 out)."""
    return Reply(body=sse_body(responses_events(chunks_of(text, piece), thinking=list(thinking))),
                 event_delay=event_delay, **options)


def responses_sse(text: str, **options: Any) -> Reply:
    """The simplest answer a Responses endpoint gives: `text` in 40-character deltas."""
    return responses_stream(text, **options)


def responses_midstream_error(text: str, *, piece: int = 40, event_delay: float = 0.0) -> Reply:
    """Some text, then the in-stream `error` event OpenAI sends when it fails mid-answer."""
    events: list[Any] = responses_events(chunks_of(text, piece), finish=None)[:-1]  # the message left open
    events.append(event("error", code="server_error", param=None,
                        message="The server had an error while processing your request."))
    return Reply(body=sse_body(events), event_delay=event_delay)
