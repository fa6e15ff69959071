"""The one redaction: held keys and credential-shaped tokens go, ordinary text stays."""

from __future__ import annotations

import pytest

from providers.redaction import REDACTED, redact_secrets


@pytest.mark.parametrize("text,leak", [
    ("Authorization: Bearer abc.DEF-ghi_jkl~mno", "abc.DEF-ghi_jkl~mno"),
    ("GET /v1beta/models?key=Zx9qLmN0pQ7rStUv&alt=sse", "Zx9qLmN0pQ7rStUv"),
    ('{"api_key": "plainsecretvalue123"}', "plainsecretvalue123"),
    ("x-api-key: 4f9c2a77be1d0e63aa", "4f9c2a77be1d0e63aa"),
    ("Incorrect API key provided: sk-proj-abcdefghijklmnop1234.", "abcdefghijklmnop1234"),
    ("Incorrect API key provided: sk-proj-********************wxyz.", "****wxyz"),
    ("token ya29.a0AfB_byCANARYcanary0123456789", "CANARY"),
])
def test_assigned_bearer_and_shaped_secrets_are_redacted(text, leak):
    redacted = redact_secrets(text)
    assert leak not in redacted and REDACTED in redacted


def test_held_keys_go_longest_first_and_short_ones_are_not_keys():
    held = ["pool-key-CANARY", "pool-key-CANARY-extended"]
    assert redact_secrets("used pool-key-CANARY-extended today", held) == f"used {REDACTED} today"
    assert redact_secrets("max_tokens: 32000, key: abc", known_secrets=["abc"]) == "max_tokens: 32000, key: abc"


def test_redaction_leaves_ordinary_text_alone():
    text = "Rate limit reached for gpt-4 on tokens per min. Limit: 10000 / min. request_id=req_011CWdepJv"
    assert redact_secrets(text) == text
    assert redact_secrets("") == ""
