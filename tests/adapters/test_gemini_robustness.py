"""Gemini streams cut, re-split and mutated: nothing escapes, nothing visible is invented.

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
    GEMINI_MIDSTREAM_ERROR_BARE,
    GEMINI_MIDSTREAM_ERROR_DATA,
    GEMINI_PARALLEL_CALLS,
    GEMINI_SAFETY_AFTER_TEXT,
    GEMINI_THINK_TEXT,
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
    "own/think_text": GEMINI_THINK_TEXT,
    "own/parallel_calls": GEMINI_PARALLEL_CALLS,
    "own/safety_after_text": GEMINI_SAFETY_AFTER_TEXT,
    "own/midstream_error_data": GEMINI_MIDSTREAM_ERROR_DATA,
    "own/midstream_error_bare": GEMINI_MIDSTREAM_ERROR_BARE,
}
STREAMS = sorted(OWN) + corpus_streams("gemini")


def body_of(name: str) -> bytes:
    if name in OWN:
        return OWN[name]
    assert CORPUS is not None
    return Reply.from_corpus(CORPUS, name).body


@pytest.mark.parametrize("name", STREAMS)
async def test_cut_at_every_event_boundary(provider_server, name):
    body = body_of(name)
    full = await run_stream(provider_server, "google", Reply(body=body))
    for events in range(event_count(body)):
        cut = await run_stream(provider_server, "google", Reply(body=body, cut_after_events=events))
        assert_cut_consistent(cut, full)


@pytest.mark.parametrize("name", STREAMS)
async def test_cut_at_random_byte_offsets(provider_server, name):
    body = body_of(name)
    full = await run_stream(provider_server, "google", Reply(body=body))
    for offset in cut_offsets(body, seed=len(body)):
        cut = await run_stream(provider_server, "google", Reply(body=body, cut_after_bytes=offset))
        assert_cut_consistent(cut, full)


async def test_a_cut_inside_a_call_part_withholds_it(provider_server):
    body = OWN["own/parallel_calls"]
    offset = body.index(b'"get_time"')  # inside the payload that carries both calls
    cut = await run_stream(provider_server, "google", Reply(body=body, cut_after_bytes=offset))
    assert cut.calls == [] and cut.thoughts == [("raw", "Let me look.")]
    assert (cut.error.type, cut.error.retryable) == ("provider_overloaded", True)


async def test_clean_end_without_finish_reason_is_interrupted(provider_server):
    body = OWN["own/think_text"].rsplit(b"data: ", 1)[0]  # drop the last payload cleanly
    out = await run_stream(provider_server, "google", Reply(body=body))
    assert out.text == "The sky "
    assert (out.error.type, out.error.retryable) == ("provider_overloaded", True)


@pytest.mark.parametrize("name", STREAMS)
async def test_transport_split_does_not_change_the_outcome(provider_server, name):
    body = body_of(name)
    whole = essentials(await run_stream(provider_server, "google", Reply(body=body)))
    for seed in (1, 2, 3):
        pieces = Reply(body=body, random_pieces=seed, max_piece=23)
        assert essentials(await run_stream(provider_server, "google", pieces)) == whole


@pytest.mark.parametrize("name", STREAMS)
async def test_pure_half_matches_the_server_path_on_clean_bodies(provider_server, name):
    served = await run_stream(provider_server, "google", Reply(body=body_of(name)))
    assert essentials(pure_run("google", body_of(name))) == essentials(served)


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
    out = pure_run("google", body)  # summarize() checks every chunk's shape
    if broken:
        assert out.error is not None and out.done is None
    if out.error is None:
        assert out.done is not None and out.done["finish_reason"]


async def test_fuzzed_bodies_through_the_server_match_the_pure_half(provider_server):
    rng = random.Random(4)
    for _ in range(30):
        source = rng.choice(sorted(OWN))
        kind = rng.choice(["drop_line", "break_json", "wrong_type"])
        body, _ = mutate(OWN[source], kind, rng.randrange(10_000), rng.randrange(100), rng.randrange(10_000))
        served = await run_stream(provider_server, "google", Reply(body=body))
        assert essentials(served) == essentials(pure_run("google", body))
