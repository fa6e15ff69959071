"""The pure parts of voice: the bounds read from Discord's figures, the Ogg check, and the
quote line a transcript is shown in; and the transcription route refusing a metadata
address before any request."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.capabilities.voice.audio import MAX_VOICE_BYTES, bound_refusal, is_ogg
from bot.capabilities.voice.notes import MAX_QUOTE_CHARS, QUOTE_PREFIX, quote_line
from providers.capabilities import capabilities_of
from providers.transcription import Recording, Transcriber, TranscriptionFailed
from tests.capabilities.voice.fakes import ogg_recording


@given(st.floats(allow_nan=True, allow_infinity=True), st.integers(0, 2 * MAX_VOICE_BYTES), st.integers(5, 1200))
def test_a_recording_passes_only_within_both_bounds(seconds: float, size: int, max_seconds: int) -> None:
    refusal = bound_refusal(seconds, size, max_seconds)
    within = math.isfinite(seconds) and seconds <= max_seconds and size <= MAX_VOICE_BYTES
    assert (refusal is None) == within
    if not math.isfinite(seconds) or seconds > max_seconds:
        assert refusal == "voice_too_long"


def test_no_stated_length_is_refused() -> None:
    assert bound_refusal(None, 10, 300) == "voice_too_long"


@given(st.binary(max_size=64))
def test_only_an_ogg_capture_pattern_opens_a_recording(data: bytes) -> None:
    assert is_ogg(data) == (len(data) >= 27 and data[:4] == b"OggS")


def test_a_real_ogg_page_is_a_recording_and_a_wave_file_is_not() -> None:
    assert is_ogg(ogg_recording())
    assert not is_ogg(b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(64))


@given(st.text(max_size=3000))
def test_the_quote_line_is_one_small_quoted_line_that_pings_no_one(words: str) -> None:
    line = quote_line(words, "en")
    assert line.startswith(QUOTE_PREFIX) and "\n" not in line
    assert len(line) <= MAX_QUOTE_CHARS * 2 + 40  # escaping at most doubles the cut words
    assert "@everyone" not in line.replace("@\u200beveryone", "")


def test_markdown_and_mentions_in_the_words_are_shown_as_said() -> None:
    line = quote_line("call **@everyone** now", "en")
    assert "\\*\\*" in line and "@\u200beveryone" in line


async def test_a_metadata_address_is_refused_before_any_request() -> None:
    transcriber = Transcriber("whisper-1", [], "http://169.254.169.254/v1")
    try:
        with pytest.raises(TranscriptionFailed) as failed:
            await transcriber.transcribe(Recording("voice-message.ogg", ogg_recording(), "audio/ogg"))
    finally:
        await transcriber.aclose()
    assert failed.value.reason == "refused"


@pytest.mark.parametrize(("provider", "model", "hears"), [
    ("google", "gemini-2.5-flash", True),
    ("google", "gemini-3.5-pro", True),
    ("google", "gemma-3-27b-it", False),
    # OpenAI's audio-input chat models take `input_audio` as wav or mp3 only (the SDK's
    # `format: Literal["wav", "mp3"]`): an Ogg voice message reaches them as its transcript.
    ("openai", "gpt-4o-audio-preview", False),
    ("anthropic", "claude-opus-4-7", False),
    ("custom", "whisper-chat", False),
])
def test_which_models_hear_a_voice_message_as_it_is(provider: str, model: str, hears: bool) -> None:
    assert ("audio/ogg" in capabilities_of(provider, model).audio) == hears
