"""The Responses stream normalized, through the real openai SDK and the replay server:
text, thoughts, calls, searches and every way a response ends (the event shapes are
OpenAI's streaming events reference; tests/support/data_openai_responses.py)."""

from __future__ import annotations

import pytest

from providers import ChatRequest, Message, create_adapter
from providers.openai_responses.events import END_OF_BODY, new_stream, process_event
from providers.openai_responses.request import REASONING_ITEMS
from providers.types import RawStreamChunk, Source, Usage
from tests.support import data_openai_responses as rx
from tests.support.drive_adapter import served_outcome
from tests.support.fake_provider_server import Reply


def body(events: list) -> Reply:
    return Reply(body=rx.sse_body(events))


async def test_text_and_usage(provider_server):
    out = await served_outcome(provider_server, "openai", body(rx.TEXT))
    assert out.text == "Hello there."
    assert [c.type for c in out.chunks] == ["text", "text", "text", "done"]
    assert (out.done.finish_reason, out.done.usage) == ("stop", Usage(9, 3, 0, 0, 12))
    assert (out.done.sources, out.done.searches) == (None, None)


async def test_summary_parts_are_paragraphs_and_calls_carry_their_reasoning(provider_server):
    out = await served_outcome(provider_server, "openai", body(rx.REASONING_CALLS), model="gpt-5")
    assert out.thoughts == [("summary", "The user wants "), ("summary", "weather."),
                            ("summary", "\n\nTwo cities: call twice.")]
    assert [(c.name, c.args, c.id) for c in out.calls] == [("get_weather", {"city": "Paris"}, "call_paris"),
                                                           ("get_weather", {"city": "Rome"}, "call_rome")]
    first, second = out.calls
    assert first.provider_fields == {REASONING_ITEMS: [{
        "type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAA-enc-1",
        "summary": [{"type": "summary_text", "text": "The user wants weather."},
                    {"type": "summary_text", "text": "Two cities: call twice."}]}]}
    assert second.provider_fields == {}  # its reasoning went with the first call
    assert out.done.finish_reason == "tool_calls"
    assert out.done.usage == Usage(40, 30, 18, 8, 70)


async def test_the_output_cap_ends_the_answer_with_length_so_it_can_be_continued(provider_server):
    out = await served_outcome(provider_server, "openai", body(rx.LENGTH), model="gpt-5")
    assert (out.text, out.error) == ("One, two, three,", None)
    assert out.done.finish_reason == "length"
    assert out.done.usage == Usage(5, 16, 8, 0, 21)


@pytest.mark.parametrize(("reason", "finish"), [("content_filter", "content_filter"), ("max_messages", "other"),
                                                (None, "other")])
async def test_other_incomplete_reasons(provider_server, reason, finish):
    ended = rx.incomplete(reason) if reason else rx.event(
        "response.incomplete", response=rx.response("incomplete"))
    out = await served_outcome(provider_server, "openai", body([rx.created(), *rx.message(0, ["Par"]), ended]))
    assert (out.text, out.done.finish_reason) == ("Par", finish)


async def test_a_refusal_is_shown_as_text(provider_server):
    out = await served_outcome(provider_server, "openai", body(rx.REFUSAL))
    assert (out.text, out.done.finish_reason) == ("I can't help with that.", "stop")


async def test_raw_reasoning_text_is_a_raw_thought(provider_server):
    out = await served_outcome(provider_server, "openai", body(rx.RAW_REASONING), model="gpt-oss-120b")
    assert (out.raw_thoughts, out.text) == ("Think twice.", "Done.")


async def test_two_message_items_are_two_paragraphs(provider_server):
    events = [rx.created(), *rx.message(0, ["Working on it."], item="msg_a"),
              *rx.message(1, ["Here it is."], item="msg_b"), rx.completed()]
    out = await served_outcome(provider_server, "openai", body(events))
    assert out.text == "Working on it.\n\nHere it is."
    assert out.done.usage is None  # none reported


async def test_a_search_gives_its_query_sources_and_the_providers_count(provider_server):
    out = await served_outcome(provider_server, "openai", body(rx.SEARCH), model="gpt-5")
    assert out.text == "Sunny (weather.example)."
    assert out.done.searches == ["weather paris today"]
    assert out.done.sources == [Source("https://weather.example/paris", "Paris weather")]
    assert out.done.usage.searches == 1


async def test_searches_are_counted_from_the_stream_when_the_provider_reports_none(provider_server):
    events = [rx.created(), *rx.web_search(0, "one", item="ws_1"), *rx.web_search(1, "two", item="ws_2"),
              rx.event("response.output_item.done", output_index=2, item={
                  "id": "ws_3", "type": "web_search_call", "status": "completed",
                  "action": {"type": "open_page", "url": "https://example.com"}}),
              *rx.message(3, ["ok"]), rx.completed(rx.usage(1, 1))]
    out = await served_outcome(provider_server, "openai", body(events))
    assert out.done.searches == ["one", "two"]
    assert out.done.usage.searches == 2  # opening a page is not a search


@pytest.mark.parametrize("annotation", [
    {"type": "file_citation", "file_id": "f"}, {"type": "url_citation", "url": "ftp://x"},
    {"type": "url_citation"}, "not an object", {"type": "url_citation", "url": "https://a.example", "title": 5},
])
async def test_citations_that_do_not_fit_are_left_out_never_fatal(provider_server, annotation):
    events = [rx.created(), *rx.message(0, ["ok"])[:2],
              rx.event("response.output_text.annotation.added", item_id="msg_1", output_index=0,
                       content_index=0, annotation_index=0, annotation=annotation),
              rx.completed()]
    out = await served_outcome(provider_server, "openai", body(events))
    assert out.error is None and out.text == "ok"
    kept = [Source("https://a.example")] if isinstance(annotation, dict) and annotation.get("title") == 5 else None
    assert out.done.sources == kept


async def test_an_error_event_after_text_ends_with_the_providers_error(provider_server):
    out = await served_outcome(provider_server, "openai", body(rx.MIDSTREAM_ERROR))
    assert out.text == "Partial "
    assert (out.error.code, out.error.kind, out.error.retryable) == ("server_error", "overloaded", True)
    assert out.done is None


async def test_a_failed_response_without_its_error_is_still_a_failure(provider_server):
    out = await served_outcome(provider_server, "openai", body([
        rx.created(), rx.event("response.failed", response=rx.response("failed"))]))
    assert out.error.message == "the provider reported the response failed"


async def test_a_body_that_ends_before_a_terminal_event_was_interrupted(provider_server):
    for events in (rx.TEXT[:-1], [*rx.TEXT[:-1], "[DONE]"]):
        out = await served_outcome(provider_server, "openai", body(events))
        assert out.text == "Hello there."
        assert (out.error.type, out.error.retryable) == ("provider_overloaded", True)
        assert out.error.message == "the stream ended before the provider finished the answer"


@pytest.mark.parametrize(("event", "why"), [
    ('{"type": "response.output_item.done", "item": {"type": "function_call", "call_id": "c", "arguments": "{}"}}',
     "function_call without a name"),
    ('{"type": "response.output_item.done", "item": {"type": "function_call", "name": "f", "arguments": "{}"}}',
     "function_call without a call_id"),
    ('{"type": "response.completed", "response": []}', "terminal event without a response object"),
    ('{"type": 7}', "event has no type"),
    ("[1, 2]", "event is not a JSON object"),
    ('{"type": "response.output_item.added", "item": null}', "output item is not an object"),
])
async def test_malformed_events_are_a_malformed_stream(provider_server, event, why):
    out = await served_outcome(provider_server, "openai", body([rx.created(), *rx.message(0, ["ok"])[:2], event]))
    assert out.text == "ok"
    assert (out.error.type, out.error.retryable) == ("api_error", False)
    assert out.error.message == f"malformed stream: {why}"


async def test_cut_arguments_still_parse_as_a_truncated_call(provider_server):
    events = [rx.created(), *rx.function_call(0, "call_1", "get_weather", ['{"city": "Paris", "unit": "c']),
              rx.completed()]
    out = await served_outcome(provider_server, "openai", body(events))
    assert out.call_summary == [("get_weather", {"city": "Paris"}, True)]


def test_nothing_follows_the_end_and_the_pure_half_never_raises():
    state = new_stream("openai")
    events = [(e["type"], rx.sse_body([e]).split(b"data: ", 1)[1].rstrip()) for e in rx.TEXT]
    chunks = [c for event in events for c in process_event(state, event)]
    assert chunks[-1].type == "done"
    assert process_event(state, ("response.output_text.delta", b'{"type": "response.output_text.delta"}')) == []
    assert process_event(state, END_OF_BODY) == []


async def test_a_chunk_from_elsewhere_is_refused_by_the_adapter():
    adapter = create_adapter("openai", api_key="sk-test", model="gpt-5")
    with pytest.raises(ValueError):
        adapter.process_chunk(RawStreamChunk((None, b"{}"), "openai", {}))


async def test_the_request_never_asks_for_stored_state(provider_server):
    await served_outcome(provider_server, "openai", body(rx.TEXT),
                         request=ChatRequest(messages=[Message("user", "hi")]))
    sent = provider_server.requests[-1].json
    assert sent["store"] is False and "previous_response_id" not in sent
