"""Commands named in catalog text, as each reader sees them.

Catalogs (every language) name commands by their English paths; on Discord each becomes a
mention of the command's synced id (each client shows it in its own language), so a
Japanese hint never sends a member to an English path. The terminal keeps the paths as
written. The real LLMBot against the fake Discord; its synced command ids are the fake's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from bot.check.reply import check_reply
from bot.check.run import CheckReport, CheckResult, CheckRoute
from bot.check.terminal import report_text
from bot.edge.command_names import WRITTEN_PATH, for_discord, installed
from bot.repo import ModelTarget
from bot.repo.keys import KEYLESS_LEASE
from providers.types import ProviderError
from tests.errors.test_error_embed import JapaneseGuildDiscord
from tests.errors.test_wrong_base_url import NOT_FOUND
from tests.support.check_answers import answer_embeds
from tests.support.drive_commands import NO_PERMISSIONS, command, member, opt, sub
from tests.support.drive_discord_client import llmbot_factory, running_bot

LOCALES = Path(__file__).resolve().parents[2] / "locales"


@pytest.fixture
def bot_factory(tmp_path):
    return llmbot_factory(tmp_path)


def catalog_texts() -> list[tuple[str, str]]:
    """(where, text) of every entry of every catalog, every language."""
    found = []
    for po in sorted(LOCALES.glob("*/LC_MESSAGES/*.po")):
        with open(po, "rb") as handle:
            found.extend((f"{po.parts[-3]}/{po.stem}:{m.id}", m.string) for m in read_po(handle) if m.id)
    return found


def root_id(fake, name: str) -> str:
    return next(c["id"] for c in fake.commands["global"] if c["name"] == name)


def named_paths(text: str, roots: set[str]) -> list[list[str]]:
    """The words after each slash that starts with a command's root (`/v1` is no command)."""
    return [m.group(2).split(" ") for m in WRITTEN_PATH.finditer(text) if m.group(2).split(" ")[0] in roots]


async def test_every_command_a_catalog_names_is_in_the_tree_and_renders_as_a_mention(fake_discord, bot_factory):
    fake = fake_discord
    async with running_bot(fake, bot_factory()):
        names = dict(installed())
        rendered = {where: for_discord(text, "ja") for where, text in catalog_texts()}
    roots = {path[0] for path in names}
    missing = [(where, " ".join(words)) for where, text in catalog_texts() for words in named_paths(text, roots)
               if not any(tuple(words[:size]) in names for size in range(1, len(words) + 1))]
    assert missing == []  # e.g. "/personal キー登録" named a path in neither language
    assert sum(bool(named_paths(text, roots)) for _, text in catalog_texts()) > 40  # the scan sees the hints
    left = {where: text for where, text in rendered.items() if named_paths(text, roots)}
    assert left == {}  # after rendering no hint names a path: each is a mention
    assert all(command.root_id is not None for command in names.values())


async def test_a_japanese_hint_on_discord_is_a_mention(fake_discord, bot_factory):
    fake = fake_discord
    carol = member(fake, "carol")
    async with running_bot(fake, bot_factory()) as run:
        chosen = await command(run, fake, "personal", sub("model", opt("provider", "openai"), opt("model", "gpt-a")),
                               user=carol, permissions=NO_PERMISSIONS, locale="ja")
        english = await command(run, fake, "personal", sub("override", opt("enabled", True)), user=carol,
                                permissions=NO_PERMISSIONS)
    personal = root_id(fake, "personal")
    assert chosen.content.splitlines()[-1] == f"次は </personal key set:{personal}> でこのモデル用のキーを保存してください。"
    assert english.content == (f"Set your key and model first (</personal key set:{personal}>, "
                               f"</personal model:{personal}>).")


async def test_a_japanese_error_embed_names_commands_by_mention(provider_server, bot_factory):
    server = provider_server
    server.reply(NOT_FOUND)
    async with JapaneseGuildDiscord() as fake:
        bot = bot_factory(ALLOW_PRIVATE_ENDPOINTS="true", DEFAULT_TEXT_PROVIDER="custom",
                          DEFAULT_TEXT_MODEL="llama3.2", DEFAULT_TEXT_BASE_URL=server.url)
        async with running_bot(fake, bot) as run:
            await fake.send_user_message(f"<@{fake.bot_user['id']}> こんにちは", mention_bot=True)
            await run.wait_for(lambda: answer_embeds(fake))
        [embed] = answer_embeds(fake)
        tips = embed["fields"][0]["value"]
        assert f"</model fallback add:{root_id(fake, 'model')}> で予備のモデルを追加すると" in tips
        assert "/model" not in tips.replace("</model", "")


async def test_the_terminal_keeps_the_paths_while_discord_shows_mentions(fake_discord, bot_factory):
    route = CheckRoute(ModelTarget("openai", "gpt-gone"), KEYLESS_LEASE, "server")
    failed = ProviderError(type="model_error", message="The model `gpt-gone` does not exist", retryable=False,
                           code="404", provider="openai")
    report = CheckReport(route, [CheckResult("text", "commands.check.name.text", "failed", error=failed)])
    async with running_bot(fake_discord, bot_factory()):  # this process knows the ids now
        terminal = report_text(report, "en")
        discord_reply = check_reply(report, "title", "en")
    # The terminal's reader runs the bot's .env: its advice names settings, and no mention
    # (which only a Discord client renders) ever reaches it.
    assert "Set DEFAULT_TEXT_MODEL in .env to a model this provider offers." in terminal
    assert "</" not in terminal
    assert f"</model set:{root_id(fake_discord, 'model')}>" in discord_reply and "`/model set`" not in discord_reply


def test_the_rendering_rules():
    """Backticks around a mention would show it as code: the mention leaves them, an option
    stays in them; a path the bot does not have, or a URL's path, is left as written."""
    from bot.edge.command_names import NamedCommand, install

    install({("personal", "override"): NamedCommand(("personal", "override"), "", {"ja": "個人設定 個人キー優先"}, {}, 7),
             ("keys", "add"): NamedCommand(("keys", "add"), "", {"ja": "キー 追加"}, {}, None)})
    try:
        assert for_discord("Use `/personal override enabled: False`.", "en") == \
            "Use </personal override:7> `enabled: False`."
        assert for_discord("`/keys add` で", "ja") == "`/キー 追加` で"
        assert for_discord("/keys add to add one", "en-US") == "/keys add to add one"
        assert for_discord("see https://x.test/keys/add and `/v1`", "ja") == "see https://x.test/keys/add and `/v1`"
        assert for_discord("/keys add", "ja", mentions=False) == "/キー 追加"
    finally:
        install({})
