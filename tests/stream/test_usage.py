"""Usage normalization across provider shapes, latest wins."""

from __future__ import annotations

from types import SimpleNamespace

from stream.usage import Usage, merge_usage, normalize_usage


def test_openai_shape():
    usage = normalize_usage({
        "prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30,
        "completion_tokens_details": {"reasoning_tokens": 5},
        "prompt_tokens_details": {"cached_tokens": 4},
    })
    assert usage == Usage(10, 20, 30, 5, 4)


def test_anthropic_shape_counts_cache_as_prompt():
    usage = normalize_usage({"input_tokens": 3, "cache_read_input_tokens": 100,
                             "cache_creation_input_tokens": 7, "output_tokens": 50})
    assert usage == Usage(110, 50, None, None, 100)
    assert merge_usage(None, usage).total_tokens == 160


def test_gemini_shapes_camel_and_snake_and_sdk_objects():
    camel = normalize_usage({"promptTokenCount": 8, "candidatesTokenCount": 12,
                             "thoughtsTokenCount": 30, "totalTokenCount": 50})
    assert camel == Usage(8, 42, 50, 30, None)
    snake = normalize_usage(SimpleNamespace(prompt_token_count=8, candidates_token_count=12,
                                            thoughts_token_count=None, total_token_count=20))
    assert snake == Usage(8, 12, 20, None, None)


def test_latest_wins_field_by_field():
    first = normalize_usage({"input_tokens": 12, "output_tokens": 1})
    later = normalize_usage({"output_tokens": 40})
    merged = merge_usage(merge_usage(None, first), later)
    assert merged == Usage(12, 40, 52, None, None)
    assert merge_usage(merged, None) == merged


def test_empty_or_unknown_usage_is_none():
    assert normalize_usage(None) is None
    assert normalize_usage({}) is None
    assert normalize_usage({"prompt_tokens": "many"}) is None
