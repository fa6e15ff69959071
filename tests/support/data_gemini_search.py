"""Gemini streams grounded on Google Search, written from the documented wire format.

No recorded stream of the shared corpus carries `groundingMetadata` (checked: none of
`gemini/*.sse` has it), so these are hand-written: the metadata's shape is Google's REST
`GroundingMetadata` (camelCase; the suite validates it against the SDK's own type), with
the Gemini API's habits: each page's uri is Google's redirect, its title the domain, the
metadata on the last payload, a zero `startIndex` left out (proto3 JSON).
"""

from __future__ import annotations

import base64
from typing import Any

from providers.types import Source
from tests.support.data_gemini import g_chunk, gemini_body

REDIRECT = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"
UEFA, ALJAZEERA, WIKIPEDIA, BBC = (f"{REDIRECT}{code}" for code in ("AUZIYQ-uefa", "AUZIYQ-alj", "AUZIYQ-wiki",
                                                                   "AUZIYQ-bbc"))
FIRST = "Spain won Euro 2024, beating England 2-1 in the final. "
SECOND = "The final was played in Berlin."
QUERIES = ["who won euro 2024", "euro 2024 final venue"]


def web(uri: str, title: str | None) -> dict[str, Any]:
    page: dict[str, Any] = {"uri": uri}
    if title is not None:
        page["title"] = title
    return {"web": page}


def support(indices: list[int], start: int | None, end: int, text: str) -> dict[str, Any]:
    segment: dict[str, Any] = {"endIndex": end, "text": text}
    if start:  # proto3 JSON leaves a zero out
        segment["startIndex"] = start
    return {"segment": segment, "groundingChunkIndices": indices, "confidenceScores": [0.9] * len(indices)}


_SECOND_AT = len(FIRST.encode())
# Chunks listed in an order unlike the citations': the supports cite aljazeera (at 0), then
# bbc and uefa (at the second sentence, in that order); wikipedia is never cited.
METADATA: dict[str, Any] = {
    "searchEntryPoint": {"renderedContent": "<style>.container{}</style><div class=\"container\">…</div>"},
    "groundingChunks": [web(UEFA, "uefa.com"), web(ALJAZEERA, "aljazeera.com"), web(WIKIPEDIA, "wikipedia.org"),
                        web(BBC, "bbc.com")],
    "groundingSupports": [
        support([3, 0], _SECOND_AT, _SECOND_AT + len(SECOND), SECOND),
        support([1], None, len(FIRST.rstrip()), FIRST.rstrip()),
    ],
    "webSearchQueries": QUERIES,
}
EXPECTED = [Source(ALJAZEERA, "aljazeera.com"), Source(BBC, "bbc.com"), Source(UEFA, "uefa.com"),
            Source(WIKIPEDIA, "wikipedia.org")]
USAGE = {"promptTokenCount": 12, "candidatesTokenCount": 21, "totalTokenCount": 33}


def grounded(payloads: list[dict[str, Any]], metadata: dict[str, Any], at: int = -1) -> list[dict[str, Any]]:
    """`payloads` with `metadata` on the candidate of payload `at`."""
    payloads = [dict(p, candidates=[dict(p["candidates"][0])]) for p in payloads]
    payloads[at]["candidates"][0]["groundingMetadata"] = metadata
    return payloads


ANSWER = [g_chunk([{"text": FIRST}]), g_chunk([{"text": SECOND}], "STOP", USAGE)]
GEMINI_GROUNDED = gemini_body(grounded(ANSWER, METADATA))

# The same answer with the metadata spread and repeated: the first payload already names
# one query (and an empty one, which Google neither counts nor bills) and the page it
# cites, and the last payload repeats everything.
EARLY = {"webSearchQueries": ["", QUERIES[0]], "groundingChunks": [web(ALJAZEERA, "aljazeera.com")],
         "groundingSupports": [support([0], None, len(FIRST.rstrip()), FIRST.rstrip())]}
GEMINI_GROUNDED_SPREAD = gemini_body(grounded(grounded(ANSWER, EARLY, 0), METADATA))

# Gemini 3 combining search and function calling: the server-side search shows as
# toolCall / toolResponse parts (includeServerSideToolInvocations), then the model calls
# the bot's function; the metadata comes with the call.
SIG = "CiIBVKhc7vSearch+/fixture=="
GEMINI_GROUNDED_CALL = gemini_body(grounded([
    g_chunk([{"toolCall": {"id": "srv-1", "toolType": "GOOGLE_SEARCH_WEB", "args": {"queries": QUERIES}},
              "thoughtSignature": SIG}]),
    g_chunk([{"toolResponse": {"id": "srv-1", "toolType": "GOOGLE_SEARCH_WEB", "response": {"status": "ok"}}}]),
    g_chunk([{"text": FIRST}, {"functionCall": {"name": "get_weather", "args": {"city": "Berlin"}}}], "STOP",
            USAGE),
], METADATA))

# Gemini 3 combining search and function calling, every part as Google's tool-combination
# guide shows it (https://ai.google.dev/gemini-api/docs/tool-combination, "Example request
# structure"): the search the API ran as a `toolCall` (toolType, args.queries, id) and its
# `toolResponse` (toolType, response.search_suggestions, the same id), each with its own
# thoughtSignature, then the model's text and its call of the bot's function, signed too.
# Constructed from that documented shape (no recorded stream carries these parts), one
# part per payload as Gemini streams them.
# Signatures are opaque base64 (the SDK's Part.thought_signature is bytes).
SEARCH_SIG, RESULT_SIG, CALL_SIG = (base64.b64encode(f"fixture {name} signature".encode()).decode()
                                   for name in ("search", "result", "call"))
SEARCH_CALL_PART = {"thoughtSignature": SEARCH_SIG,
                    "toolCall": {"toolType": "GOOGLE_SEARCH_WEB", "args": {"queries": QUERIES[:1]}, "id": "a7b3k9p2"}}
SEARCH_RESULT_PART = {"thoughtSignature": RESULT_SIG,
                      "toolResponse": {"toolType": "GOOGLE_SEARCH_WEB", "id": "a7b3k9p2",
                                       "response": {"search_suggestions": "<div>who won euro 2024</div>"}}}


def search_then_call(name: str, args: dict[str, Any], text: str = "Let me check. ") -> bytes:
    """A search, its result, some text, then a call of the bot's function `name`."""
    call = {"functionCall": {"name": name, "args": args, "id": "m4q8z1v6"}, "thoughtSignature": CALL_SIG}
    return gemini_body([g_chunk([SEARCH_CALL_PART]), g_chunk([SEARCH_RESULT_PART]),
                        g_chunk([{"text": text}, call], "STOP", USAGE)])
