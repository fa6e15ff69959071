"""Fuzz: mutated OpenAI-family SSE bodies (dropped lines, broken JSON, wrong types, garbage
bytes) never raise; failures come out only as error chunks and every stream still ends in
exactly one `error` or `done`."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers.openai_compat.normalize import END_OF_BODY, new_stream_state, process_event
from providers.streaming import MalformedStreamError, SSEDecoder
from providers.types import ChatRequest, ProcessedChunk, ProviderError
from tests.adapters import fixtures_openai as fx
from tests.adapters.fixtures_openai import HELLO, TOOLS, Outcome, run
from tests.adapters.test_openai_corpus import check_cut
from tests.fakes.provider_server import Reply

BASES = {
    "text": ("openai", fx.sse_body(fx.TEXT)),
    "reasoning": ("deepseek", fx.sse_body(fx.REASONING_CONTENT)),
    "think": ("custom", fx.sse_body(fx.THINK_TAGS_SPLIT)),
    "parallel": ("openai", fx.sse_body(fx.PARALLEL_TOOL_CALLS)),
    "truncated": ("zai", fx.sse_body(fx.TRUNCATED_ARGUMENTS)),
    "openrouter": ("openrouter", fx.sse_body(fx.OPENROUTER_REASONING_TOOL, comments=fx.OPENROUTER_COMMENTS)),
    "verbatim": ("custom", fx.sse_body(fx.VERBATIM)),
}
WRONG = [None, 5, -1.5, True, "x", "", [], {}, [1, "a"], {"k": None}, "\ud800"]


def _mutate_json(obj, rng: random.Random):
    """Replace one value somewhere in `obj` with a value of a wrong type."""
    node, path = obj, []
    while isinstance(node, (dict, list)) and node and rng.random() < 0.8:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append((node, key))
        node = node[key]
    if not path:
        return rng.choice(WRONG)
    parent, key = path[-1]
    parent[key] = rng.choice(WRONG)
    return obj


def mutate(body: bytes, rng: random.Random, count: int) -> bytes:
    lines = body.split(b"\n")
    for _ in range(count):
        i = rng.randrange(len(lines))
        op = rng.randrange(6)
        line = lines[i]
        if op == 0:
            del lines[i]  # dropped line
            if not lines:
                lines = [b""]
        elif op == 1 and line.startswith(b"data: {"):
            lines[i] = line[: rng.randrange(6, len(line))]  # broken JSON
        elif op == 2 and line.startswith(b"data: {"):
            try:
                obj = json.loads(line[6:])
            except ValueError:
                continue  # already broken by an earlier mutation
            lines[i] = b"data: " + json.dumps(_mutate_json(obj, rng)).encode()  # wrong types
        elif op == 3:
            lines[i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 12)))  # garbage
        elif op == 4:
            lines.insert(i, rng.choice([b"event: error", b"data: [DONE]", b": ping", b"", b"data: null",
                                        b'data: {"error": 7}', b'data: {"choices": 3}']))
        else:
            lines[i] = line.replace(b"\n", b"")[: len(line) // 2]
    return b"\n".join(lines)


def pure_chunks(provider: str, body: bytes, cuts: list[int], *, tools: bool) -> list[ProcessedChunk]:
    request = ChatRequest(messages=HELLO.messages, tools=TOOLS if tools else ())
    state = new_stream_state(provider, request, verbatim_tool_calling=tools)
    decoder = SSEDecoder()
    chunks: list[ProcessedChunk] = []
    pieces, last = [], 0
    for cut in sorted(c % (len(body) + 1) for c in cuts):
        pieces.append(body[last:cut])
        last = cut
    pieces.append(body[last:])
    try:
        for piece in pieces:
            for event in decoder.feed(piece):
                chunks.extend(process_event(state, event))
        for event in decoder.finish():
            chunks.extend(process_event(state, event))
    except MalformedStreamError:
        # The decoder refuses a broken stream by raising; the adapter turns it into an error.
        return chunks + [ProcessedChunk(type="error", error=ProviderError("api_error", "m", False, None))]
    chunks.extend(process_event(state, END_OF_BODY))
    return chunks


def assert_well_formed(chunks: list[ProcessedChunk]) -> None:
    Outcome.of(chunks)  # validates every chunk's shape
    ends = [c for c in chunks if c.type in ("error", "done")]
    assert len(ends) == 1, [c.type for c in chunks]
    assert chunks[-1] is ends[0]
    assert all(c.type in ("text", "function_call") for c in chunks[:-1])


@settings(max_examples=250, deadline=None)
@given(base=st.sampled_from(sorted(BASES)), seed=st.integers(0, 2**32), count=st.integers(1, 4),
       cuts=st.lists(st.integers(0, 10_000), max_size=6))
def test_mutated_bodies_only_produce_error_chunks(base, seed, count, cuts):
    provider, body = BASES[base]
    mutated = mutate(body, random.Random(seed), count)
    chunks = pure_chunks(provider, mutated, cuts, tools=base == "verbatim")
    assert_well_formed(chunks)


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(data):
    chunks = pure_chunks("openrouter", data, [7, 19], tools=False)
    assert_well_formed(chunks)


def test_wrong_types_are_error_chunks_not_silence():
    body = fx.sse_body([fx.chunk({"content": "ok"}), fx.chunk({"content": 5})])
    chunks = pure_chunks("openai", body, [], tools=False)
    assert [c.type for c in chunks] == ["text", "error"]
    assert "content is not a string" in chunks[-1].error.message


async def test_mutated_bodies_through_the_sdk(provider_server):
    rng = random.Random(20261202)
    for round_ in range(30):
        name = rng.choice(sorted(BASES))
        provider, body = BASES[name]
        provider_server.reply(Reply(body=mutate(body, rng, rng.randint(1, 3)), random_pieces=round_, max_piece=40))
        out = await run(provider_server, provider)
        assert_well_formed(out.chunks)


@pytest.mark.parametrize("base", sorted(BASES))
def test_own_fixtures_cut_at_every_byte(base):
    """Cut anywhere (no END marker after a transport cut: the adapter's error comes from the
    transport), then with END: text stays a prefix, calls are whole or flagged, and the end is
    a retryable error unless the finish reason had already arrived."""
    provider, body = BASES[base]
    tools = base == "verbatim"
    full = Outcome.of(pure_chunks(provider, body, [], tools=tools))
    assert full.last.type == "done"
    for offset in range(len(body)):
        cut = Outcome.of(pure_chunks(provider, body[:offset], [offset // 2], tools=tools))
        check_cut(full, cut, transport=False)
