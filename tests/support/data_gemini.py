"""Gemini streamGenerateContent (`alt=sse`) bodies, written from the documented wire format.

Own fixtures, so the adapter suites mean something without the shared corpus: each
payload is one `data:` line, built with `g_chunk` and joined by `gemini_body`.
"""

from __future__ import annotations

import json
from typing import Any


def gemini_body(payloads: list[Any]) -> bytes:
    return "".join(
        f"data: {p if isinstance(p, str) else json.dumps(p)}\r\n\r\n" for p in payloads
    ).encode()


def g_chunk(parts: list[dict], finish: str | None = None, usage: dict | None = None) -> dict:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    payload: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-test-001",
                               "responseId": "resp-fixture"}
    if usage:
        payload["usageMetadata"] = usage
    return payload


GEMINI_SIG_A = "CiIBVKhc7vSigA+/fixture=="
GEMINI_SIG_B = "CiIBVKhc7vSigB+/fixture=="

GEMINI_THINK_TEXT = gemini_body([
    g_chunk([{"text": "**Planning**\n\nThink about colors.", "thought": True}],
            usage={"promptTokenCount": 9, "totalTokenCount": 30, "thoughtsTokenCount": 21}),
    g_chunk([{"text": "The sky ", "thoughtSignature": GEMINI_SIG_A}]),
    g_chunk([{"text": "is blue."}], finish="STOP",
            usage={"promptTokenCount": 9, "candidatesTokenCount": 5, "totalTokenCount": 35,
                   "thoughtsTokenCount": 21}),
])

GEMINI_PARALLEL_CALLS = gemini_body([
    g_chunk([{"text": "Let me look.", "thought": True}]),
    g_chunk([
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": GEMINI_SIG_B},
        {"functionCall": {"name": "get_time", "args": {"tz": "Asia/Tokyo", "format": {"h24": True}}}},
    ], finish="STOP", usage={"promptTokenCount": 40, "candidatesTokenCount": 12, "totalTokenCount": 52}),
])

GEMINI_SAFETY_AFTER_TEXT = gemini_body([
    g_chunk([{"text": "Here is"}]),
    g_chunk([{"text": " a start"}], finish="SAFETY"),
])

GEMINI_PROMPT_BLOCKED = gemini_body([
    {"promptFeedback": {"blockReason": "BLOCKLIST"}, "usageMetadata": {"promptTokenCount": 4}},
])

GEMINI_UNSPECIFIED_BLOCK_IS_NOT_A_BLOCK = gemini_body([
    {"promptFeedback": {"blockReason": "BLOCKED_REASON_UNSPECIFIED"}, **g_chunk([{"text": "fine"}], "STOP")},
])

GEMINI_MIDSTREAM_ERROR_DATA = gemini_body([
    g_chunk([{"text": "Part"}]),
    {"error": {"code": 503, "message": "The model is overloaded. Please try again later.",
               "status": "UNAVAILABLE"}},
])

# An error after the stream started, written as bare pretty-printed JSON lines.
GEMINI_MIDSTREAM_ERROR_BARE = gemini_body([g_chunk([{"text": "Part"}])]) + (
    b'{\n  "error": {\n    "code": 429,\n    "message": "Resource has been exhausted '
    b'(e.g. check quota).",\n    "status": "RESOURCE_EXHAUSTED"\n  }\n}\n'
)

GEMINI_MALFORMED_CALL = gemini_body([g_chunk([], finish="MALFORMED_FUNCTION_CALL")])

# Every usage field Gemini reports, as running totals: 100 prompt tokens (40 from cached
# content), 30 thinking tokens, then 20 answer tokens.
GEMINI_ALL_USAGE = gemini_body([
    g_chunk([{"text": "Count them.", "thought": True}],
            usage={"promptTokenCount": 100, "cachedContentTokenCount": 40, "thoughtsTokenCount": 30,
                   "totalTokenCount": 130}),
    g_chunk([{"text": "Counted."}], finish="STOP",
            usage={"promptTokenCount": 100, "candidatesTokenCount": 20, "thoughtsTokenCount": 30,
                   "cachedContentTokenCount": 40, "totalTokenCount": 150}),
])
