"""The operator's terminal (`bot ask`, `bot check`) gets advice in `.env` settings: every
failure kind has some, for every provider and finer cause, in every language, and none of
it names a slash command (the operator is not in Discord, and the route is not set there)."""

from __future__ import annotations

import re
from typing import get_args

import pytest

from bot.errors import ErrorScene, resolve_presentation
from bot.errors.terminal import TERMINAL_TIPS
from providers.failure_kind import KIND_TYPE
from providers.i18n import t
from providers.identity import Provider
from providers.types import FailureKind, ProviderError
from stream.limits import content_timeout
from tests.errors.test_tip_commands import _catalog

KINDS: tuple[FailureKind, ...] = get_args(FailureKind)
# The finer causes a terminal tip is chosen by, and none.
REASONS = (None, "daily_free_cap", "google_credential_type", "private_address", "metadata_address")
LOCALES = ("en", "ja")


def command_names() -> set[str]:
    """Every top-level command as Discord shows it, in each language (`/keys`, `/キー`, …)."""
    names = set()
    for lang in LOCALES:
        for key, text in _catalog(lang, "commands").items():
            parts = key.split(".")
            if len(parts) == 3 and parts[0] == "commands" and parts[2] == "name" and text:
                names.add(text)
    return names


COMMAND = re.compile(r"(?<![\w.:/])/(?:" + "|".join(map(re.escape, sorted(command_names()))) + r")(?!\w)")


def failure(kind: FailureKind, provider: Provider, reason: str | None) -> ProviderError:
    error_type, retryable = KIND_TYPE[kind]
    return ProviderError(type=error_type, message="", retryable=retryable, code=None, provider=provider.value,
                         kind=kind, reason=reason)


def terminal_scene(locale: str) -> ErrorScene:
    return ErrorScene(locale, "server", audience="terminal", address="models.example:8443/v1")


def test_the_scan_would_find_a_command():
    assert {"keys", "model", "personal", "キー"} <= command_names()
    assert COMMAND.search(t("genai.tips.verify_api_key", "en"))  # the Discord form names /keys add
    assert COMMAND.search(t("genai.tips.verify_api_key", "ja"))
    assert not COMMAND.search("https://openrouter.ai/models, end in /v1, DEFAULT_TEXT_MODEL")


def test_every_kind_has_terminal_tips():
    assert set(TERMINAL_TIPS) == set(KINDS)
    for kind in KINDS:
        for provider in Provider:
            shown = resolve_presentation(failure(kind, provider, None), terminal_scene("en"))
            assert shown.tip_keys, (kind, provider)


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("kind", KINDS)
def test_no_terminal_advice_names_a_slash_command(kind: FailureKind, locale: str):
    for provider in Provider:
        for reason in REASONS:
            shown = resolve_presentation(failure(kind, provider, reason), terminal_scene(locale))
            for key in shown.tip_keys:
                text = t(key, locale)
                assert text != key, f"{key} has no {locale} text"
                assert not COMMAND.search(text), f"{kind}/{provider}/{reason}: {key} names a command: {text}"
            assert not COMMAND.search(shown.headline), shown.headline


def test_the_channel_keeps_its_command_advice():
    """Only the terminal's advice changed: a channel is still told the command to run."""
    error = failure("invalid_key", Provider.OPENAI, None)
    in_channel = resolve_presentation(error, ErrorScene("en", "server"))
    in_terminal = resolve_presentation(error, terminal_scene("en"))
    assert "genai.tips.verify_api_key" in in_channel.tip_keys
    assert in_terminal.tip_keys == ["genai.tips.verify_api_key_terminal", "genai.tips.switch_model_provider_terminal"]


@pytest.mark.parametrize("locale", LOCALES)
def test_a_silent_stream_names_where_it_waited_and_how_long(locale: str):
    silent = content_timeout(True, 90, "custom")
    shown = resolve_presentation(silent, terminal_scene(locale))
    assert "models.example:8443/v1" in shown.headline and "90" in shown.headline
    assert shown.detail == ""
    assert "genai.tips.shorten_message" not in shown.tip_keys
    assert shown.tip_keys[0] == "genai.tips.silent_server_terminal"
    in_channel = resolve_presentation(silent, ErrorScene(locale, "server", address="models.example:8443/v1"))
    assert "models.example" not in in_channel.headline + in_channel.detail  # a channel never sees the address
