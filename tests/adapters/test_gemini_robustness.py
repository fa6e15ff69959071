"""Gemini streams cut, re-split and mutated: nothing escapes, nothing visible is invented.

Cuts and splits go through the replay server and the real SDK; the fuzz drives the
adapter's pure half (decoder + process_chunk) with hypothesis, and a seeded sample of
the same mutations through the server must give exactly the same outcome. The checks
themselves are shared with the Anthropic suite (fixtures_native).
"""

from __future__ import annotations

import pytest

from tests.adapters.fixtures_native import (
    FUZZ_SETTINGS,
    GEMINI_MIDSTREAM_ERROR_BARE,
    GEMINI_MIDSTREAM_ERROR_DATA,
    GEMINI_PARALLEL_CALLS,
    GEMINI_SAFETY_AFTER_TEXT,
    GEMINI_THINK_TEXT,
    body_of,
    check_cut_json_at_a_clean_end,
    check_cuts,
    check_fuzz_through_server,
    check_pure_half_matches_server,
    check_transport_splits,
    fuzz_inputs,
    fuzzed_pure_run,
    run_stream,
)
from tests.corpus import corpus_streams
from tests.fakes.provider_server import Reply

PROVIDER = "google"
OWN = {
    "own/think_text": GEMINI_THINK_TEXT,
    "own/parallel_calls": GEMINI_PARALLEL_CALLS,
    "own/safety_after_text": GEMINI_SAFETY_AFTER_TEXT,
    "own/midstream_error_data": GEMINI_MIDSTREAM_ERROR_DATA,
    "own/midstream_error_bare": GEMINI_MIDSTREAM_ERROR_BARE,
}
STREAMS = sorted(OWN) + corpus_streams("gemini")


@pytest.mark.parametrize("name", STREAMS)
async def test_cut_at_every_event_boundary(provider_server, name):
    await check_cuts(provider_server, PROVIDER, body_of(OWN, name), at="events")


@pytest.mark.parametrize("name", STREAMS)
async def test_cut_at_random_byte_offsets(provider_server, name):
    await check_cuts(provider_server, PROVIDER, body_of(OWN, name), at="bytes")


async def test_a_cut_inside_a_call_part_withholds_it(provider_server):
    body = OWN["own/parallel_calls"]
    offset = body.index(b'"get_time"')  # inside the payload that carries both calls
    cut = await run_stream(provider_server, PROVIDER, Reply(body=body, cut_after_bytes=offset))
    assert cut.calls == [] and cut.thoughts == [("raw", "Let me look.")]
    assert (cut.error.type, cut.error.retryable) == ("provider_overloaded", True)


async def test_clean_end_without_finish_reason_is_interrupted(provider_server):
    body = OWN["own/think_text"].rsplit(b"data: ", 1)[0]  # drop the last payload cleanly
    out = await run_stream(provider_server, PROVIDER, Reply(body=body))
    assert out.text == "The sky "
    assert (out.error.type, out.error.retryable) == ("provider_overloaded", True)



async def test_cut_json_in_the_last_event_is_an_interruption_only_at_a_clean_end(provider_server):
    tail, whole = await check_cut_json_at_a_clean_end(provider_server, PROVIDER, OWN["own/think_text"])
    assert tail.error.message == "Gemini stream interrupted: the last payload is cut"
    assert whole.error.message.startswith("malformed Gemini stream: payload is not JSON (")

@pytest.mark.parametrize("name", STREAMS)
async def test_transport_split_does_not_change_the_outcome(provider_server, name):
    await check_transport_splits(provider_server, PROVIDER, body_of(OWN, name))


@pytest.mark.parametrize("name", STREAMS)
async def test_pure_half_matches_the_server_path_on_clean_bodies(provider_server, name):
    await check_pure_half_matches_server(provider_server, PROVIDER, body_of(OWN, name))


@FUZZ_SETTINGS
@fuzz_inputs(OWN)
def test_fuzzed_bodies_fail_only_as_error_chunks(source, kind, pick, junk, cut):
    out = fuzzed_pure_run(PROVIDER, OWN[source], kind, pick, junk, cut)
    if out.error is None:
        assert out.done is not None and out.done["finish_reason"]


async def test_fuzzed_bodies_through_the_server_match_the_pure_half(provider_server):
    await check_fuzz_through_server(provider_server, PROVIDER, OWN)
