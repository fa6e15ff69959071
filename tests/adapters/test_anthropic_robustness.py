"""Anthropic streams cut, re-split and mutated: nothing escapes, nothing visible is invented.

Cuts and splits go through the replay server and the real SDK; the fuzz drives the
adapter's pure half (decoder + process_chunk) with hypothesis, and a seeded sample of
the same mutations through the server must give exactly the same outcome.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.adapters.fixtures_native import (
    ANTHROPIC_MAX_TOKENS_TOOL,
    ANTHROPIC_RATE_LIMITED_MIDSTREAM,
    ANTHROPIC_REDACTED,
    ANTHROPIC_THINK_TOOLS,
    assert_cut_consistent,
    cut_offsets,
    essentials,
    event_count,
    mutate,
    pure_run,
    run_stream,
)
from tests.corpus import CORPUS, corpus_streams
from tests.fakes.provider_server import Reply

OWN = {
    "own/think_tools": Reply.named_sse(ANTHROPIC_THINK_TOOLS).body,
    "own/redacted": Reply.named_sse(ANTHROPIC_REDACTED).body,
    "own/midstream_rate_limit": Reply.named_sse(ANTHROPIC_RATE_LIMITED_MIDSTREAM).body,
    "own/max_tokens_tool": Reply.named_sse(ANTHROPIC_MAX_TOKENS_TOOL).body,
}
STREAMS = sorted(OWN) + corpus_streams("anthropic")


def body_of(name: str) -> bytes:
    if name in OWN:
        return OWN[name]
    assert CORPUS is not None
    return Reply.from_corpus(CORPUS, name).body


@pytest.mark.parametrize("name", STREAMS)
async def test_cut_at_every_event_boundary(provider_server, name):
    body = body_of(name)
    full = await run_stream(provider_server, "anthropic", Reply(body=body))
    for events in range(event_count(body)):
        cut = await run_stream(provider_server, "anthropic", Reply(body=body, cut_after_events=events))
        assert_cut_consistent(cut, full)


@pytest.mark.parametrize("name", STREAMS)
async def test_cut_at_random_byte_offsets(provider_server, name):
    body = body_of(name)
    full = await run_stream(provider_server, "anthropic", Reply(body=body))
    for offset in cut_offsets(body, seed=len(body)):
        cut = await run_stream(provider_server, "anthropic", Reply(body=body, cut_after_bytes=offset))
        assert_cut_consistent(cut, full)


async def test_a_cut_inside_tool_arguments_withholds_the_call(provider_server):
    body = OWN["own/think_tools"]
    offset = body.index(b'ty\\": \\"Par')  # inside the first call's argument pieces
    cut = await run_stream(provider_server, "anthropic", Reply(body=body, cut_after_bytes=offset))
    assert cut.calls == [] and cut.text == "Checking both cities."
    assert (cut.error.type, cut.error.retryable) == ("provider_overloaded", True)


@pytest.mark.parametrize("name", STREAMS)
async def test_transport_split_does_not_change_the_outcome(provider_server, name):
    body = body_of(name)
    whole = essentials(await run_stream(provider_server, "anthropic", Reply(body=body)))
    for seed in (1, 2, 3):
        pieces = Reply(body=body, random_pieces=seed, max_piece=23)
        assert essentials(await run_stream(provider_server, "anthropic", pieces)) == whole


@pytest.mark.parametrize("name", STREAMS)
async def test_pure_half_matches_the_server_path_on_clean_bodies(provider_server, name):
    served = await run_stream(provider_server, "anthropic", Reply(body=body_of(name)))
    assert essentials(pure_run("anthropic", body_of(name))) == essentials(served)


MUTATIONS = st.sampled_from(["drop_line", "break_json", "wrong_type"])


@settings(max_examples=250, deadline=None)
@given(
    source=st.sampled_from(sorted(OWN)),
    kind=MUTATIONS,
    pick=st.integers(0, 10_000),
    junk=st.integers(0, 100),
    cut=st.integers(0, 10_000),
)
def test_fuzzed_bodies_fail_only_as_error_chunks(source, kind, pick, junk, cut):
    body, broken = mutate(OWN[source], kind, pick, junk, cut)
    out = pure_run("anthropic", body)  # summarize() checks every chunk's shape
    if broken:
        assert out.error is not None and out.done is None
    if out.error is None:
        assert out.done is not None and "usage" in out.done


async def test_fuzzed_bodies_through_the_server_match_the_pure_half(provider_server):
    rng = random.Random(4)
    for _ in range(30):
        source = rng.choice(sorted(OWN))
        kind = rng.choice(["drop_line", "break_json", "wrong_type"])
        body, _ = mutate(OWN[source], kind, rng.randrange(10_000), rng.randrange(100), rng.randrange(10_000))
        served = await run_stream(provider_server, "anthropic", Reply(body=body))
        assert essentials(served) == essentials(pure_run("anthropic", body))
