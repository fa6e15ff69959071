"""Anthropic streams cut, re-split and mutated: nothing escapes, nothing visible is invented.

Cuts and splits go through the replay server and the real SDK; the fuzz drives the
adapter's pure half (decoder + process_chunk) with hypothesis, and a seeded sample of
the same mutations through the server must give exactly the same outcome. The checks
themselves are shared with the Gemini suite (fixtures_native).
"""

from __future__ import annotations

import pytest

from tests.adapters.fixtures_native import (
    ANTHROPIC_MAX_TOKENS_TOOL,
    ANTHROPIC_RATE_LIMITED_MIDSTREAM,
    ANTHROPIC_REDACTED,
    ANTHROPIC_THINK_TOOLS,
    FUZZ_SETTINGS,
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

PROVIDER = "anthropic"
OWN = {
    "own/think_tools": Reply.named_sse(ANTHROPIC_THINK_TOOLS).body,
    "own/redacted": Reply.named_sse(ANTHROPIC_REDACTED).body,
    "own/midstream_rate_limit": Reply.named_sse(ANTHROPIC_RATE_LIMITED_MIDSTREAM).body,
    "own/max_tokens_tool": Reply.named_sse(ANTHROPIC_MAX_TOKENS_TOOL).body,
}
STREAMS = sorted(OWN) + corpus_streams("anthropic")


@pytest.mark.parametrize("name", STREAMS)
async def test_cut_at_every_event_boundary(provider_server, name):
    await check_cuts(provider_server, PROVIDER, body_of(OWN, name), at="events")


@pytest.mark.parametrize("name", STREAMS)
async def test_cut_at_random_byte_offsets(provider_server, name):
    await check_cuts(provider_server, PROVIDER, body_of(OWN, name), at="bytes")


async def test_a_cut_inside_tool_arguments_withholds_the_call(provider_server):
    body = OWN["own/think_tools"]
    offset = body.index(b'ty\\": \\"Par')  # inside the first call's argument pieces
    cut = await run_stream(provider_server, PROVIDER, Reply(body=body, cut_after_bytes=offset))
    assert cut.calls == [] and cut.text == "Checking both cities."
    assert (cut.error.type, cut.error.retryable) == ("provider_overloaded", True)



async def test_cut_json_in_the_last_event_is_an_interruption_only_at_a_clean_end(provider_server):
    tail, whole = await check_cut_json_at_a_clean_end(provider_server, PROVIDER, OWN["own/redacted"])
    assert tail.error.message == "Anthropic stream interrupted: the last event is cut"
    assert whole.error.message.startswith("malformed Anthropic stream: event 'message_stop' data is not JSON (")

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
        assert out.done is not None and "usage" in out.done


async def test_fuzzed_bodies_through_the_server_match_the_pure_half(provider_server):
    await check_fuzz_through_server(provider_server, PROVIDER, OWN)
