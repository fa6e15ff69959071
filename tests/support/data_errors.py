"""Error bodies in the providers' public wire shapes, and replies that carry them.

`openai_error` / `anthropic_error` script an HTTP error reply in each family's shape.
The constants cover the cases the corpus has no recording of.

The corpus records Gemini's per-minute quota 429 (with other values); no recording of
Z.ai's plan-without-the-model 429 exists there, so both travel here as the public
shape, and the tests that have a recording read it from the corpus as well.
"""

from __future__ import annotations

from typing import Any

from tests.support.fake_provider_server import Reply

# Gemini's per-minute free-tier quota, in the public wire shape of a 429 RESOURCE_EXHAUSTED.
GEMINI_PER_MINUTE_429 = {"error": {
    "code": 429,
    "message": "You exceeded your current quota, please check your plan and billing details. For more "
               "information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.",
    "status": "RESOURCE_EXHAUSTED",
    "details": [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
            "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
            "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
            "quotaDimensions": {"location": "global", "model": "gemini-2.0-flash"}, "quotaValue": "15"}]},
        {"@type": "type.googleapis.com/google.rpc.Help", "links": [{
            "description": "Learn more about Gemini API quotas",
            "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"},
    ],
}}
# Z.ai's answer (code 1311, HTTP 429) when the key's plan does not cover the model.
ZAI_PLAN_EXCLUDES_MODEL_429 = {"error": {
    "code": "1311", "message": "Your current subscription plan does not yet include access to GLM-5"}}


def openai_error(status: int, message: str, *, code: str | None = None, kind: str | None = None,
                 **options: Any) -> Reply:
    error: dict[str, Any] = {"message": message, "type": kind, "code": code}
    return Reply.error(status, {"error": error}, **options)


def anthropic_error(status: int, kind: str, message: str) -> Reply:
    return Reply.error(status, {"type": "error", "error": {"type": kind, "message": message}})
