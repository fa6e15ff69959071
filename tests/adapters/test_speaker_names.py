"""Who said a user turn, as each family's request builder renders it (pure)."""

from __future__ import annotations

from providers.anthropic_native.request import build_arguments
from providers.capabilities import capabilities_of
from providers.gemini.request import build_body
from providers.openai_compat.request import build_request
from providers.speaker import name_field, with_speaker
from providers.types import ChatRequest, ImagePart, Message, TextPart


def conversation() -> ChatRequest:
    return ChatRequest(messages=[
        Message("user", "hi", name="Alice Smith"),
        Message("assistant", "hello"),
        Message("user", "and me?", name="太郎"),
        Message("user", "no name here"),
    ])


def test_name_field_keeps_only_what_the_openai_pattern_allows() -> None:
    assert name_field("Alice") == "Alice"
    assert name_field("  Alice   Smith ") == "Alice_Smith"
    assert name_field("bob-2_x") == "bob-2_x"
    assert name_field("太郎") is None
    assert name_field("Mr. Bob") is None  # punctuation: the prefix keeps it intact
    assert name_field("a" * 64) == "a" * 64
    assert name_field("a" * 65) is None
    assert name_field("") is None and name_field(None) is None


def test_with_speaker_prefixes_the_first_text_part() -> None:
    assert with_speaker("hi", "Alice") == "Alice: hi"
    assert with_speaker("hi", None) == "hi"
    image = ImagePart("image/png", b"\x89PNG")
    assert with_speaker([image, TextPart("look")], "Bo") == [image, TextPart("Bo: look")]
    assert with_speaker([image], "Bo") == [TextPart("Bo:"), image]


def test_openai_family_uses_the_name_field_and_falls_back_to_a_prefix() -> None:
    for provider in ("openai", "openrouter", "deepseek", "zai", "custom"):
        messages = build_request(capabilities_of(provider, "m"), conversation())["messages"]
        assert messages == [
            {"role": "user", "content": "hi", "name": "Alice_Smith"},
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": "太郎: and me?"},
            {"role": "user", "content": "no name here"},
        ]


def test_anthropic_prefixes_each_speakers_text_and_the_bot_stays_plain() -> None:
    turns = build_arguments(conversation(), capabilities_of("anthropic", "claude"))["messages"]
    assert turns == [
        {"role": "user", "content": [{"type": "text", "text": "Alice Smith: hi"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
        {"role": "user", "content": [{"type": "text", "text": "太郎: and me?"},
                                     {"type": "text", "text": "no name here"}]},
    ]


def test_gemini_prefixes_each_speakers_text_and_tool_results_keep_their_name() -> None:
    request = conversation()
    contents = build_body(request, capabilities_of("google", "gemini-2.5-flash"))["contents"]
    assert contents == [
        {"role": "user", "parts": [{"text": "Alice Smith: hi"}]},
        {"role": "model", "parts": [{"text": "hello"}]},
        {"role": "user", "parts": [{"text": "太郎: and me?"}, {"text": "no name here"}]},
    ]
    tool = ChatRequest(messages=[Message("tool", '{"ok": true}', tool_call_id="c1", name="lookup")])
    [result] = build_body(tool, capabilities_of("google", "gemini-2.5-flash"))["contents"]
    assert result["parts"][0]["functionResponse"]["name"] == "lookup"
