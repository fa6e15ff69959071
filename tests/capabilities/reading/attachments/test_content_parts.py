"""Content parts in the contract and in each family's request builder (pure), and a
model that cannot read images failing like any other refused request."""

from __future__ import annotations

import base64

import pytest

from providers.anthropic_native.request import build_arguments
from providers.capabilities import capabilities_of
from providers.errors import classify_failure
from providers.gemini.request import build_body
from providers.openai_compat.request import build_request
from providers.types import ChatRequest, ImagePart, Message, TextPart, content_parts, content_text

PIXEL = ImagePart("image/png", b"\x89PNG\r\n\x1a\n-fake-but-opaque-bytes")
B64 = base64.b64encode(PIXEL.data).decode()
PARTS = [TextPart("Attached image: a.png"), PIXEL, TextPart("what is it?")]


def test_parts_helpers_keep_a_plain_string_a_string():
    assert content_parts("hi") == [TextPart("hi")] and content_parts("") == []
    assert content_parts(PARTS) == PARTS
    assert content_text("hi") == "hi"
    assert content_text(PARTS) == "Attached image: a.png\n\nwhat is it?"
    assert PIXEL.base64() == B64


def test_openai_family_renders_parts_as_a_content_array():
    request = ChatRequest(messages=[Message("user", "earlier"), Message("assistant", [TextPart("ok")]),
                                    Message("user", PARTS)], system="sys")
    messages = build_request(capabilities_of("openai", "gpt"), request)["messages"]
    assert messages[1] == {"role": "user", "content": "earlier"}
    assert messages[2] == {"role": "assistant", "content": "ok"}
    assert messages[3] == {"role": "user", "content": [
        {"type": "text", "text": "Attached image: a.png"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64}"}},
        {"type": "text", "text": "what is it?"},
    ]}


def test_anthropic_renders_base64_image_blocks():
    request = ChatRequest(messages=[Message("user", "earlier"), Message("assistant", "ok"),
                                    Message("user", PARTS), Message("system", [TextPart("inline rule")])])
    arguments = build_arguments(request, capabilities_of("anthropic", "claude"))
    assert arguments["messages"][2] == {"role": "user", "content": [
        {"type": "text", "text": "Attached image: a.png"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B64}},
        {"type": "text", "text": "what is it?"},
    ]}
    assert arguments["messages"][0]["content"] == [{"type": "text", "text": "earlier"}]
    assert arguments["system"] == "inline rule"


def test_gemini_renders_inline_data_parts():
    body = build_body(ChatRequest(messages=[Message("user", PARTS)]), capabilities_of("google", "gemini-2.5-flash"))
    assert body["contents"] == [{"role": "user", "parts": [
        {"text": "Attached image: a.png"},
        {"inlineData": {"mimeType": "image/png", "data": B64}},
        {"text": "what is it?"},
    ]}]


@pytest.mark.parametrize("provider,status,message,code,error_type", [
    ("openai", 400, "Invalid content type. image_url is only supported by certain models.", None,
     "invalid_request_error"),
    ("openai", 400, "This model does not support image input.", "invalid_value", "invalid_request_error"),
    ("openrouter", 404, "No endpoints found that support image input", None, None),
    ("deepseek", 400, "Failed to deserialize the JSON body into the target type: messages[0]: unknown variant "
     "`image_url`, expected `text`", "invalid_request_error", None),
])
def test_a_model_without_vision_is_a_refused_request_the_next_model_may_serve(
        provider, status, message, code, error_type):
    error = classify_failure(provider=provider, message=message, status=status, code=code, error_type=error_type)
    assert error.kind in ("request_refused", "model_error")
    assert not error.retryable
