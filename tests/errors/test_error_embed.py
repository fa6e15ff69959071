"""The error embed: Discord's limits, colours, locales, and real discord.py against the fake Discord."""

from __future__ import annotations

import discord
import pytest

from bot.edge.embeds import embed_from_spec, locale_for_message
from bot.edge.limits import EMBED_DESCRIPTION_LIMIT, EMBED_FIELD_VALUE_LIMIT, EMBED_TOTAL_LIMIT
from bot.errors import (
    ErrorPresentation,
    ErrorScene,
    error_embed,
    possible_keys,
)
from bot.errors.embed import (
    CONTINUATION_NAME,
    build_error_embed_spec,
    embed_size,
    kind_color,
    tip_fields,
)
from bot.errors.tables import KIND_COLORS, RED
from providers.errors import classify_error_body
from providers.i18n import t
from providers.types import ProviderError
from tests.support.drive_discord_client import fast_ready_kwargs, running_bot
from tests.support.fake_discord_server import FakeDiscord

ALL_TIPS = sorted(k for k in possible_keys() if k.startswith("genai.tips."))


def presentation(**kw) -> ErrorPresentation:
    base = {"title_key": "genai.stream.rate_limit_title", "headline": "Headline.", "detail": "raw detail",
            "tip_keys": ["genai.tips.wait_and_retry"], "kind": "rate_limit"}
    return ErrorPresentation(**{**base, **kw})


def test_title_description_tips_and_colour():
    spec = build_error_embed_spec(presentation(), "en")
    assert spec.title == "Rate limited"
    assert spec.description == "Headline.\n\nraw detail"
    assert spec.fields == [("What you can do", "• Wait a moment, then try again.")]
    assert spec.color == KIND_COLORS["rate_limit"]
    no_detail = build_error_embed_spec(presentation(detail=""), "en")
    assert no_detail.description == "Headline."


def test_uncatalogued_locale_falls_back_to_english():
    fr = build_error_embed_spec(presentation(), "fr")
    assert fr == build_error_embed_spec(presentation(), "en")
    pt = build_error_embed_spec(presentation(), "pt-BR")
    assert pt.title == "Rate limited"
    ja = build_error_embed_spec(presentation(), "ja")
    assert ja.title == "レート制限中です" and ja.fields[0][0] == "対処方法"


@pytest.mark.parametrize("locale", ["en", "ja"])
def test_many_tips_spread_over_fields_within_limits(locale):
    spec = build_error_embed_spec(presentation(tip_keys=ALL_TIPS, detail="d" * 3000), locale)
    assert len(spec.fields) >= 2
    assert all(len(value) <= EMBED_FIELD_VALUE_LIMIT for _, value in spec.fields)
    assert [name for name, _ in spec.fields[1:]] == [CONTINUATION_NAME] * (len(spec.fields) - 1)
    lines = [line for _, value in spec.fields for line in value.split("\n")]
    assert lines == [f"• {t(k, locale)}" for k in ALL_TIPS]  # every tip whole, in order
    assert embed_size(spec) <= EMBED_TOTAL_LIMIT
    assert len(spec.description) <= EMBED_DESCRIPTION_LIMIT


def test_oversized_parts_are_trimmed_to_discords_limits():
    spec = build_error_embed_spec(presentation(headline="h" * 5000, detail="d" * 5000), "en")
    assert len(spec.description) <= EMBED_DESCRIPTION_LIMIT and spec.description.endswith("…")
    assert embed_size(spec) <= EMBED_TOTAL_LIMIT
    fields = tip_fields(["x" * 3000, "short"], "Tips")
    assert [len(v) for _, v in fields] == [EMBED_FIELD_VALUE_LIMIT, len("• short")]


def test_colour_by_kind():
    assert len({KIND_COLORS[k] for k in ("request_refused", "rate_limit", "balance_exhausted",
                                          "content_blocked", "context_length", "model_error")}) == 6
    assert kind_color("rate_limit") == kind_color("timeout") == kind_color("overloaded") == kind_color("transient")
    assert kind_color("balance_exhausted") == kind_color("credit_limit") == kind_color("billing")
    assert kind_color("invalid_key") == kind_color("request_refused") == RED
    assert kind_color("something_new") == RED


def test_discord_embed_matches_the_spec():
    spec = build_error_embed_spec(presentation(tip_keys=ALL_TIPS), "ja")
    embed = embed_from_spec(spec)
    assert embed.title == spec.title and embed.description == spec.description
    assert embed.colour is not None and embed.colour.value == spec.color
    assert [(f.name, f.value, f.inline) for f in embed.fields] == [(n, v, False) for n, v in spec.fields]


# ---- real discord.py against the fake Discord ---------------------------------------------
class JapaneseGuildDiscord(FakeDiscord):
    """The fake with a guild whose preferred locale is Japanese."""

    def guild_payload(self):
        payload = super().guild_payload()
        payload["preferred_locale"] = "ja"
        return payload


CANARY = "sk-proj-CANARYcanaryCANARY0123456789"
HELD = "pool-key-CANARY-held-0042"


def failing_error() -> ProviderError:
    return classify_error_body(provider="deepseek", status=402, body={"error": {
        "message": f"Insufficient Balance (key {CANARY}, pool {HELD})", "type": "unknown_error",
        "code": "invalid_request_error"}})


class ErrorEmbedClient(discord.Client):
    """Answers a mention with the error embed, in the locale of the channel that reads it."""

    def __init__(self) -> None:
        intents = discord.Intents.default()
        intents.message_content = True
        super().__init__(intents=intents, **fast_ready_kwargs())
        self.locales: list[str | None] = []

    async def on_message(self, message: discord.Message) -> None:
        if message.author.bot:
            return
        locale = locale_for_message(message)
        self.locales.append(locale)
        scene = ErrorScene(locale=locale, credential_source="personal", known_secrets=(HELD,))
        await message.reply(embed=embed_from_spec(error_embed(failing_error(), scene)))


async def test_mention_reply_uses_the_guilds_preferred_locale():
    async with JapaneseGuildDiscord() as fake:
        bot = ErrorEmbedClient()
        async with running_bot(fake, bot) as run:
            await fake.send_user_message("<@bot> hi", mention_bot=True)
            await run.wait_for(lambda: bool(fake.bot_messages()))
            await fake.send_user_message("dm hi", dm=True)
            await run.wait_for(lambda: len(fake.bot_messages()) >= 2)
        guild_reply, dm_reply = fake.bot_messages()
    assert bot.locales == ["ja", None]
    embed = guild_reply.embeds[0]
    assert embed["title"] == t("genai.stream.balance_exhausted_title", "ja")
    assert embed["description"].startswith(t("genai.headline.deepseek_balance", "ja"))
    tips = embed["fields"][0]["value"]
    assert t("genai.tips.deepseek_top_up_personal", "ja") in tips
    assert t("genai.tips.disable_personal_text_override", "ja") in tips
    assert dm_reply.embeds[0]["title"] == "Provider balance exhausted"  # DMs have no guild: English
    for message in (guild_reply, dm_reply):
        assert "CANARY" not in str(message.embeds)


def test_the_turns_entry_point_binds_scope_locale_and_secrets():
    spec = error_embed(failing_error(), ErrorScene(locale="ja", credential_source="personal",
                                                    known_secrets=(HELD,)))
    assert spec.title == "プロバイダーの残高がありません"
    assert t("genai.tips.disable_personal_text_override", "ja") in spec.fields[0][1]
    assert "CANARY" not in str(spec)
    rate = ProviderError(type="rate_limit", message="slow", retryable=True, code="429", provider="openai")
    server = error_embed(rate, ErrorScene(fallback_chain=("m2",)))
    assert server.title == "Rate limited"
    assert t("genai.tips.api_key_rotation", "en") in server.fields[0][1]
    assert t("genai.tips.model_fallback", "en") not in server.fields[0][1]
    assert error_embed(rate, ErrorScene(rotation_keys_exhausted=True)).title == t(
        "genai.stream.rate_limit_title_all_rotation_keys", "en")
