"""Every provider family's streams cut, re-split and mutated: nothing escapes, nothing
visible is invented.

One suite for all wire families (the table is in tests/support/data_provider_families.py): each stream,
own or from the shared corpus, is cut at every event boundary (pure half, and through
the replay server and the real SDK), cut at random byte offsets, split differently in
transport, and compared between the pure half and the server path. The fuzz mutates each
family's own streams and feeds the pure half (hypothesis), and a seeded sample of the
same mutations through the server must give exactly the pure half's outcome.
Every outcome goes through `summarize`, which checks each chunk's shape and that a
stream ends in exactly one `done` or `error`.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.data_mutations import (
    MUTATION_KINDS,
    mutate_event,
    mutate_lines,
    transport_pieces,
)
from tests.support.data_provider_families import FAMILIES, FAMILY, Family
from tests.support.drive_adapter import Stream, StreamOutcome, pure_outcome
from tests.support.fake_provider_server import Reply, split_events

STREAMS = [pytest.param(f, name, id=f"{f.name}:{name}") for f in FAMILIES for name in f.stream_names()]
OWN_STREAMS = [pytest.param(f, name, id=f"{f.name}:{name}") for f in FAMILIES for name in sorted(f.own)]
BY_FAMILY = [pytest.param(f, id=f.name) for f in FAMILIES]
FAMILY_NAMES = sorted(FAMILY)  # the fuzz takes names: hypothesis prints its arguments
FUZZ = settings(max_examples=250, deadline=None)
SPLITS = st.lists(st.integers(0, 10_000), max_size=6)  # transport cuts of the pure half's input


def essentials(out: StreamOutcome) -> tuple:
    """What must not depend on how the bytes travelled (split, served or fed directly)."""
    error = None if out.error is None else (out.error.type, out.error.retryable, out.error.code)
    calls = [(c.name, c.args, c.id, c.thought_signature, c.arguments_truncated, c.provider_fields)
             for c in out.calls]
    done = None if out.done is None else (out.done.finish_reason, out.done.usage)
    serving = sorted({c.serving_provider for c in out.chunks if c.serving_provider is not None})
    return out.text, out.thoughts, calls, done, error, serving


def check_cut(full: StreamOutcome, cut: StreamOutcome, *, transport: bool) -> None:
    """A cut stream: text and raw thoughts are prefixes of the full stream's, no call is
    invented or mangled, and it ends in a retryable error or the full stream's own error;
    only a clean end (no transport cut) may finish, once the finish reason had arrived."""
    assert full.text.startswith(cut.text)
    assert full.thought_text("raw").startswith(cut.thought_text("raw"))
    whole_calls = [(c.name, c.args) for c in full.calls]
    for i, call in enumerate(cut.calls):
        assert call.arguments_truncated or (i < len(whole_calls) and whole_calls[i] == (call.name, call.args))
    if cut.error is None:
        assert not transport, "a transport cut ends with an error chunk"
        assert cut.done is not None and cut.done.finish_reason is not None
        return
    own_error = full.error is not None and (cut.error.type, cut.error.code) == (full.error.type, full.error.code)
    assert cut.error.retryable or own_error


def check_clean_done(family: Family, out: StreamOutcome) -> None:
    """A stream that did not fail reports what its family always reports."""
    if out.error is None:
        assert out.done is not None
        for name in family.done_always_has:
            assert getattr(out.done, name) is not None, name


def server_boundaries(family: Family, name: str, events: int) -> list[int]:
    """The event boundaries cut through the server (see `Family.server_cuts`)."""
    if family.server_cuts is None or events <= family.server_cuts:
        return list(range(events))
    rng = random.Random(name)
    chosen = {0, 1, events // 2, events - 1}
    while len(chosen) < family.server_cuts:
        chosen.add(rng.randrange(events))
    return sorted(chosen)


# ---- every stream of every family -----------------------------------------------------------
@pytest.mark.parametrize("family,name", STREAMS)
def test_pure_half_cut_at_every_event_boundary(family, name):
    stream = family.stream(name)
    events = split_events(stream.body)
    full = pure_outcome(family, stream)
    for n in range(len(events)):
        check_cut(full, pure_outcome(family, stream, events[:n]), transport=False)


@pytest.mark.parametrize("family,name", STREAMS)
async def test_cut_at_event_boundaries_through_the_server(provider_server, family, name):
    stream = family.stream(name)
    full = await stream.served(provider_server)
    for n in server_boundaries(family, name, len(split_events(stream.body))):
        cut = await stream.served(provider_server, cut_after_events=n)
        check_cut(full, cut, transport=True)


@pytest.mark.parametrize("family,name", STREAMS)
async def test_cut_at_random_byte_offsets(provider_server, family, name):
    stream = family.stream(name)
    full = await stream.served(provider_server)
    rng = random.Random(len(stream.body))
    for offset in sorted({rng.randrange(1, len(stream.body)) for _ in range(6)}):
        cut = await stream.served(provider_server, cut_after_bytes=offset)
        check_cut(full, cut, transport=True)


@pytest.mark.parametrize("family,name", OWN_STREAMS)
def test_own_stream_cut_at_every_byte(family, name):
    """A clean end anywhere (the pure half, its input also split at half the cut)."""
    stream = family.stream(name)
    full = pure_outcome(family, stream)
    for offset in range(len(stream.body)):
        cut = pure_outcome(family, stream, transport_pieces(stream.body[:offset], [offset // 2]))
        check_cut(full, cut, transport=False)


@pytest.mark.parametrize("family,name", OWN_STREAMS)
async def test_a_stray_event_after_the_end_does_not_reopen_the_stream(provider_server, family, name):
    """Whatever follows a stream's end, it still ends once and what it showed stays."""
    stream = family.stream(name)
    clean = await stream.served(provider_server)
    strayed = stream.with_body(stream.body + b"data: null\n\n")
    for out in (pure_outcome(family, strayed), await strayed.served(provider_server)):
        assert (out.text, out.calls) == (clean.text, clean.calls)


@pytest.mark.parametrize("family,name", STREAMS)
async def test_transport_split_does_not_change_the_outcome(provider_server, family, name):
    stream = family.stream(name)
    whole = essentials(await stream.served(provider_server))
    for seed, size in ((1, 23), (2, 23), (3, 23), (len(name), 97)):
        pieces = await stream.served(provider_server, random_pieces=seed, max_piece=size)
        assert essentials(pieces) == whole


@pytest.mark.parametrize("family,name", STREAMS)
async def test_pure_half_matches_the_server_path_on_clean_bodies(provider_server, family, name):
    stream = family.stream(name)
    served = await stream.served(provider_server)
    assert essentials(pure_outcome(family, stream)) == essentials(served)


# ---- targeted cuts, one per family ------------------------------------------------------------
@pytest.mark.parametrize("family", BY_FAMILY)
async def test_a_cut_inside_tool_arguments_withholds_the_call(provider_server, family):
    expected = family.tool_cut
    stream = family.stream(expected.source)
    cut = await stream.served(provider_server, cut_after_bytes=stream.body.index(expected.marker))
    assert cut.calls == []
    assert (cut.text, tuple(cut.thoughts)) == (expected.text, expected.thoughts)
    assert (cut.error.type, cut.error.retryable) == ("provider_overloaded", True)


@pytest.mark.parametrize("family", BY_FAMILY)
async def test_cut_json_in_the_last_event_is_an_interruption_only_at_a_clean_end(provider_server, family):
    """The last event's JSON cut, then a clean end of body: interrupted (retryable); the
    same event completed by its blank line: a malformed stream (not retryable)."""
    expected = family.cut_json
    stream = family.stream(expected.source)
    body = stream.body.rstrip(b"\r\n")
    cut = body[: (body.rindex(b"data: ") + 6 + len(body)) // 2]
    tail = await stream.with_body(cut).served(provider_server)
    whole = await stream.with_body(cut + b"\n\n").served(provider_server)
    assert (tail.error.type, tail.error.retryable, tail.error.message) == (
        "provider_overloaded", True, expected.message)
    assert (whole.error.type, whole.error.retryable) == ("api_error", False)
    assert whole.error.message.startswith(expected.other_message)


@pytest.mark.parametrize("family", BY_FAMILY)
async def test_clean_end_before_the_finish_reason_is_an_interruption(provider_server, family):
    expected = family.unfinished
    stream = family.stream(expected.source)
    events = split_events(stream.body)
    out = await stream.with_body(b"".join(events[: len(events) - expected.drop])).served(provider_server)
    assert out.text == expected.text
    assert (out.error.type, out.error.retryable) == ("provider_overloaded", True)


@pytest.mark.parametrize("family", BY_FAMILY)
async def test_wrong_types_are_error_chunks_not_silence(provider_server, family):
    expected = family.wrong_type
    stream = family.stream(expected.source)
    for out in (pure_outcome(family, stream), await stream.served(provider_server)):
        assert [c.type for c in out.chunks] == ["text", "error"]
        assert out.text == expected.text
        assert expected.message in out.error.message


# ---- fuzz -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", FAMILY_NAMES)
@FUZZ
@given(data=st.data(), kind=st.sampled_from(MUTATION_KINDS), pick=st.integers(0, 10_000),
       junk=st.integers(0, 100), cut=st.integers(0, 10_000), splits=SPLITS)
def test_mutated_events_fail_only_as_error_chunks(name, data, kind, pick, junk, cut, splits):
    """Broken JSON must end in an error chunk, never done; anything else ends well-formed."""
    family = FAMILY[name]
    stream = family.stream(data.draw(st.sampled_from(sorted(family.own)), label="source"))
    body, broken = mutate_event(stream.body, kind, pick, junk, cut)
    out = pure_outcome(family, stream.with_body(body), transport_pieces(body, splits))
    if broken:
        assert out.error is not None and out.done is None
    check_clean_done(family, out)


@pytest.mark.parametrize("name", FAMILY_NAMES)
@FUZZ
@given(data=st.data(), seed=st.integers(0, 2**32), count=st.integers(1, 4), splits=SPLITS)
def test_mutated_lines_fail_only_as_error_chunks(name, data, seed, count, splits):
    family = FAMILY[name]
    stream = family.stream(data.draw(st.sampled_from(sorted(family.own)), label="source"))
    body = mutate_lines(stream.body, random.Random(seed), count)
    out = pure_outcome(family, stream.with_body(body), transport_pieces(body, splits))
    # Blunt line changes may destroy every line that carries usage or a finish reason
    # (seen: Anthropic's message_start retyped and message_delta garbled), so only the
    # shape is asserted here: an error, or a done.
    assert out.error is not None or out.done is not None


@pytest.mark.parametrize("name", FAMILY_NAMES)
@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(name, data):
    family = FAMILY[name]
    stream = Stream(family.fuzz_provider, Reply(body=data))
    check_clean_done(family, pure_outcome(family, stream, transport_pieces(data, [7, 19])))


@pytest.mark.parametrize("family", BY_FAMILY)
async def test_fuzzed_bodies_through_the_server_match_the_pure_half(provider_server, family):
    """Both mutation styles, seeded, served in random pieces: the pure half's exact outcome."""
    rng = random.Random(20261202)
    names = sorted(family.own)
    for round_ in range(60):
        stream = family.own[rng.choice(names)]
        if round_ % 2:
            body = mutate_lines(stream.body, rng, rng.randint(1, 3))
        else:
            kind = rng.choice(MUTATION_KINDS)
            body, _ = mutate_event(stream.body, kind, rng.randrange(10_000), rng.randrange(100),
                                   rng.randrange(10_000))
        mutated = stream.with_body(body)
        served = await mutated.served(provider_server, random_pieces=round_, max_piece=40)
        assert essentials(served) == essentials(pure_outcome(family, mutated)), (round_, body)
