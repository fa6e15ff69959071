"""Every recorded Responses stream (tests/fixtures/openai_responses, SOURCES.md there)
normalized through the real openai SDK: the text, thoughts, calls, sources, searches and
usage each one carries, and its errors classified exactly like the same body over HTTP."""

from __future__ import annotations

import json

import pytest

from providers.openai_responses.request import REASONING_ITEMS
from providers.types import Usage
from tests.support import data_openai_responses as rx
from tests.support.data_provider_families import RESPONSES
from tests.support.drive_adapter import pure_outcome, served_outcome
from tests.support.fake_provider_server import Reply, split_events

RECORDED = sorted(path.stem for path in rx.FIXTURES.glob("*.sse"))


def payloads(name: str) -> list[dict]:
    """The recording's event payloads, read with plain json (the test's own oracle)."""
    return [json.loads(event.split(b"data: ", 1)[1]) for event in split_events(rx.recorded(name))]


def deltas(name: str, kind: str) -> list[str]:
    return [event["delta"] for event in payloads(name) if event["type"] == kind]


async def outcome(server, name: str, model: str = "gpt-5"):
    return await served_outcome(server, "openai", Reply(body=rx.recorded(name)), model=model)


@pytest.mark.parametrize("name", RECORDED)
async def test_served_and_pure_halves_agree_on_every_recording(provider_server, name):
    served = await outcome(provider_server, name, model="m-test")
    pure = pure_outcome(RESPONSES, RESPONSES.stream(f"recorded/{name}"))
    assert served.essentials() == pure.essentials()


async def test_two_phases_are_two_paragraphs(provider_server):
    out = await outcome(provider_server, "text_two_phases")
    assert out.text == "Got it\n\nHere are a few **AI"
    assert (out.done.finish_reason, out.done.usage) == ("stop", Usage(7112, 463, 64, 3072, 7575))


async def test_the_summary_streams_and_the_call_keeps_its_whole_encrypted_reasoning(provider_server):
    name = "reasoning_summary_function_call"
    out = await outcome(provider_server, name)
    assert out.text == ""
    assert out.thought_text("summary") == "".join(deltas(name, "response.reasoning_summary_text.delta"))
    assert out.thought_text("summary").startswith("**Calculating step-by-step using calculator**\n\nI'll compute")
    [call] = out.calls
    assert (call.name, call.args, call.id) == ("calculator", {"a": 12, "b": 7, "op": "add"},
                                               "call_AB6AaRZ1FYZB2RwS6A5vbdqn")
    [reasoning] = call.provider_fields[REASONING_ITEMS]
    done = next(e["item"] for e in payloads(name)
                if e["type"] == "response.output_item.done" and e["item"]["type"] == "reasoning")
    assert reasoning == {"type": "reasoning", "id": done["id"], "summary": done["summary"],
                         "encrypted_content": done["encrypted_content"]}
    assert (out.done.finish_reason, out.done.usage) == ("tool_calls", Usage(134, 28, 0, 0, 162))


async def test_the_answer_after_the_tool_results(provider_server):
    out = await outcome(provider_server, "text_after_tool_results")
    assert (out.text, out.thoughts, out.calls) == ("The final result is **570**.", [], [])
    assert (out.done.finish_reason, out.done.usage) == ("stop", Usage(299, 12, 0, 0, 311))


async def test_six_summary_parts_are_six_paragraphs(provider_server):
    name = "reasoning_multi_summary_encrypted"
    out = await outcome(provider_server, name)
    parts = {}
    for event in payloads(name):
        if event["type"] == "response.reasoning_summary_text.delta":
            parts[event["summary_index"]] = parts.get(event["summary_index"], "") + event["delta"]
    assert len(parts) == 6
    assert out.thought_text("summary") == "\n\n".join(parts[i] for i in range(6))
    assert out.text == "X"
    assert out.done.usage == Usage(100, 500, 300, 0, 600)


async def test_a_searched_answer_gives_its_queries_its_cited_pages_and_its_searches(provider_server):
    name = "web_search_citations"
    out = await outcome(provider_server, name)
    assert out.text == "".join(deltas(name, "response.output_text.delta"))
    assert len(out.text) == 3645
    cited = [e["annotation"] for e in payloads(name) if e["type"] == "response.output_text.annotation.added"]
    assert [(s.url, s.title) for s in out.done.sources] == [(c["url"], c["title"]) for c in cited]
    assert len(out.done.sources) == 12
    # Six web_search_call items: two searches, one page opened, three finds within a page.
    assert out.done.searches == ["tech news today December 5 2025",
                                 'site:theverge.com "December 5, 2025" "technology"']
    assert out.done.usage == Usage(31073, 4416, 3712, 3712, 35489, searches=2)
    assert (out.done.finish_reason, out.calls) == ("stop", [])


ERRORS = [
    # (recording, the HTTP status the same body comes with, its kind)
    ("error_event_insufficient_quota", 429, "balance_exhausted"),
    ("response_failed_rate_limit", 429, "rate_limit"),
]


@pytest.mark.parametrize(("name", "status", "kind"), ERRORS)
async def test_an_error_in_the_stream_is_classified_like_the_same_body_over_http(provider_server, name,
                                                                                 status, kind):
    first = next(e for e in payloads(name) if e["type"] in ("error", "response.failed"))
    error = first.get("error") or first["response"]["error"]
    in_stream = (await outcome(provider_server, name)).error
    over_http = (await served_outcome(provider_server, "openai", Reply.error(status, {"error": error}))).error
    assert (in_stream.kind, in_stream.code, in_stream.type, in_stream.retryable) == (
        over_http.kind, over_http.code, over_http.type, over_http.retryable)
    assert in_stream.kind == kind
    assert in_stream.message == error["message"]


async def test_the_error_event_ends_the_stream_before_response_failed(provider_server):
    out = await outcome(provider_server, "error_event_insufficient_quota")
    assert [c.type for c in out.chunks] == ["error"]
