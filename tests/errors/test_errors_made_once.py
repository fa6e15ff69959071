"""Every ProviderError comes out of `providers/errors.py`, and nothing changes one afterwards.

The source checks read the code itself, so a new hand-built error or a late assignment
fails here; the stream checks run the stream layer's own errors (a timeout, a bug, an
error chunk without an error) through `run_stream` and see them made whole, provider
included.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from providers.errors import classify_failure
from providers.types import ProcessedChunk
from stream.buffer import MessageDelivery
from stream.limits import StreamLimits
from stream.orchestrator import run_stream
from tests.support.drive_stream import scripted_text
from tests.support.fake_clock import VirtualClock
from tests.support.fake_message_sink import MemorySink

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("providers", "stream", "bot")
FIELDS = "|".join(f.name for f in dataclasses.fields(classify_failure(provider="openai", message="x")))
LATE_ASSIGNMENT = re.compile(rf"\b\w*(?:err|error|under|failure)\w*\.(?:{FIELDS})\s*=(?!=)")


def _sources() -> list[tuple[str, str]]:
    return [(str(path.relative_to(ROOT)), path.read_text(encoding="utf-8"))
            for layer in LAYERS for path in sorted((ROOT / layer).rglob("*.py"))]


def test_only_providers_errors_builds_a_provider_error():
    built = [(name, line.strip()) for name, text in _sources() for line in text.splitlines()
             if "ProviderError(" in line and not line.lstrip().startswith(("#", "class "))]
    assert built and all(name == "providers/errors.py" for name, _ in built), built


def test_no_error_field_is_assigned_after_the_error_was_made():
    late = {(name, line.strip()) for name, text in _sources() for line in text.splitlines()
            if LATE_ASSIGNMENT.search(line) and not line.lstrip().startswith("#")}
    assert late == set()


async def _run(chunks, provider: str | None):
    clock = VirtualClock()
    delivery = MessageDelivery(MemorySink(clock), clock=clock)
    limits = StreamLimits(first_content_seconds=5, idle_seconds=10, total_seconds=60)
    return await clock.run(run_stream(chunks, delivery, limits=limits, provider=provider))


async def test_a_stream_made_timeout_names_its_provider_and_is_classified():
    clock = VirtualClock()

    async def silent():
        await clock.sleep(3600)
        yield scripted_text("never")

    delivery = MessageDelivery(MemorySink(clock), clock=clock)
    result = await clock.run(run_stream(silent(), delivery, provider="deepseek",
                                        limits=StreamLimits(first_content_seconds=5)))
    error = result.error
    assert (error.kind, error.type, error.retryable, error.provider) == ("timeout", "timeout", True, "deepseek")


async def test_a_stream_bug_and_an_empty_error_chunk_name_their_provider():
    async def broken():
        yield scripted_text("Hi")
        raise RuntimeError("a bug of ours")

    async def empty_error():
        yield ProcessedChunk(type="error")

    for chunks, code in ((broken(), "stream_internal"), (empty_error(), "unknown")):
        result = await _run(chunks, "zai")
        assert (result.error.code, result.error.kind, result.error.provider) == (code, "request_refused", "zai")
