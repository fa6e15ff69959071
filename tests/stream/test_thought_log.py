"""Thought-log formatting: text, notes for signatures/redactions, footer, attachment."""

from __future__ import annotations

from providers.i18n import t
from providers.types import ThoughtLogEntry
from stream.capture import CapturedBlock
from stream.thought_log import (
    EMBED_DESCRIPTION_LIMIT,
    EMBED_TOTAL_LIMIT,
    ThoughtLogLabels,
    format_thought_log,
    reasoning_text,
    thought_log_footer,
)


def discord_counted_chars(embed) -> int:
    """What Discord counts toward an embed's 6,000 characters (the test's own oracle)."""
    return len(embed.title) + len(embed.description) + len(embed.footer or "") + sum(
        len(name) + len(value) for name, value in embed.fields
    )


def test_footer_names_the_provider_or_the_openrouter_backend():
    assert thought_log_footer("anthropic") == "Provider: anthropic"
    assert thought_log_footer("openrouter", " minimax-cn ") == "Provider: openrouter via minimax-cn"
    assert thought_log_footer("openrouter") == "Provider: openrouter"
    assert thought_log_footer("deepseek", "ignored") == "Provider: deepseek"


def test_the_footer_speaks_the_servers_language_and_names_stay_as_given():
    from providers.i18n import t

    japanese = ThoughtLogLabels.translated(lambda key: t(key, "ja"))
    assert thought_log_footer("openrouter", "{x}", japanese) == "プロバイダー: openrouter（経由: {x}）"
    assert thought_log_footer("deepseek", None, japanese) == "プロバイダー: deepseek"


def test_short_reasoning_is_one_embed_without_attachment():
    entries = [
        ThoughtLogEntry("summary", "Plan: greet.", "google"),
        ThoughtLogEntry("signature", "c2lnbmF0dXJl", "google"),
        ThoughtLogEntry("signature", "bW9yZQ==", "google"),
        ThoughtLogEntry("redacted", "ZW5jcnlwdGVk", "anthropic"),
    ]
    blocks = [CapturedBlock("think", " leaked thought "), CapturedBlock("details", "notes")]
    post = format_thought_log(entries, blocks, provider="google")
    assert post.attachment is None
    assert post.embed.footer == "Provider: google"
    assert post.embed.description == (
        "Plan: greet.\n\n[thought signature present]\n\n[redacted reasoning present, not shown]"
        "\n\nleaked thought\n\nHidden details block:\nnotes"
    )
    assert "c2lnbmF0dXJl" not in post.embed.description and "ZW5jcnlwdGVk" not in post.embed.description


def test_long_reasoning_goes_as_a_text_attachment():
    text = "reasoning step. " * 800
    post = format_thought_log([ThoughtLogEntry("raw", text, "openrouter")], provider="openrouter",
                              serving_provider="minimax-cn")
    assert post.attachment is not None
    filename, data = post.attachment
    assert filename.endswith(".txt") and data.decode("utf-8") == text.strip()
    assert len(post.embed.description) <= EMBED_DESCRIPTION_LIMIT
    assert discord_counted_chars(post.embed) <= EMBED_TOTAL_LIMIT
    assert post.embed.description.endswith("The full reasoning is attached as a text file.")
    assert post.embed.footer == "Provider: openrouter via minimax-cn"


def test_no_reasoning_no_post():
    assert format_thought_log([ThoughtLogEntry("raw", "   ", "openai")], [], provider="openai") is None


def test_labels_come_from_the_catalog():
    labels = ThoughtLogLabels.translated(lambda key: t(key, "ja"))
    assert labels.title == "思考ログ"
    assert reasoning_text([ThoughtLogEntry("redacted", "x", "anthropic")], labels=labels) == labels.redacted


def test_the_searched_queries_open_the_post_even_without_reasoning() -> None:
    post = format_thought_log([], provider="anthropic", searches=["euro 2024 winner", "final venue"])
    assert post is not None
    assert post.embed.description == "Searched the web for:\n- euro 2024 winner\n- final venue"
    with_reasoning = format_thought_log([ThoughtLogEntry("raw", "Let me think.", "anthropic")],
                                        provider="anthropic", searches=["q"])
    assert with_reasoning is not None
    assert with_reasoning.embed.description == "Searched the web for:\n- q\n\nLet me think."
    assert format_thought_log([], provider="anthropic") is None
