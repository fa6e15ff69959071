"""Failures inside configuration commands and forms become one localized, ephemeral line.

A probe cog built on the real ConfigCog (and a probe form on the real ConfigModal) is
added to the running bot and synced to the fake Discord; each invocation makes it raise
one kind of failure, as a repository call, the vault or a bug would.
"""

from __future__ import annotations

import ast
import logging
from collections.abc import Callable
from pathlib import Path

import discord
from discord import app_commands

from bot.cogs.base import ERROR_KEYS, ConfigCog
from bot.cogs.forms import KeyModal
from bot.repo import RepositoryError
from bot.vault import VaultError
from tests.support.drive_commands import command, opt, submit_modal
from tests.support.drive_discord_client import running_bot

SECRET = "sk-CANARY-probe-0000"
FAILURES: dict[str, Callable[[str], Exception]] = {
    "known": lambda typed: RepositoryError("label_taken", label="main"),
    "unknown": lambda typed: RepositoryError("a_code_nobody_wrote_a_message_for"),
    "vault": lambda typed: VaultError("a stored API key cannot be decrypted"),
    "bug": lambda typed: RuntimeError(f"unexpected state near {typed!r}"),
}
INTERNAL = "Something went wrong; nothing was stored. Please try again."
REPO_DIR = Path(__file__).resolve().parents[2] / "bot" / "repo"


class ProbeForm(KeyModal):
    def __init__(self, locale: discord.Locale, failure: str) -> None:
        super().__init__("Probe", locale)
        self.failure = failure

    async def on_submit(self, interaction: discord.Interaction, /) -> None:
        raise FAILURES[self.failure](self.key.value)


class ProbeCog(ConfigCog):
    @app_commands.command(name="probe", description="Raises the failure it is named")
    async def probe(self, interaction: discord.Interaction, failure: str) -> None:
        raise FAILURES[failure]("")

    @app_commands.command(name="probe-form", description="Opens a form that raises the failure it is named")
    async def probe_form(self, interaction: discord.Interaction, failure: str) -> None:
        await interaction.response.send_modal(ProbeForm(interaction.locale, failure))


async def with_probe(bot) -> None:
    await bot.add_cog(ProbeCog(bot))
    await bot.tree.sync()


async def test_a_repository_error_in_a_command_becomes_the_localized_reply(fake_discord, bot_factory, caplog):
    fake = fake_discord
    bot = bot_factory()
    async with running_bot(fake, bot) as run:
        await with_probe(bot)
        known = await command(run, fake, "probe", opt("failure", "known"))
        known_ja = await command(run, fake, "probe", opt("failure", "known"), locale="ja")
        unknown = await command(run, fake, "probe", opt("failure", "unknown"))
        vault = await command(run, fake, "probe", opt("failure", "vault"))
        with caplog.at_level(logging.ERROR, logger="bot.cogs.base"):
            bug = await command(run, fake, "probe", opt("failure", "bug"))
    assert (known.type, known.content, known.ephemeral) == (
        4, "The label `main` is already used for this provider. Nothing was stored.", True)
    assert known_ja.content == "ラベル `main` はこのプロバイダーで使用済みです。何も保存していません。"
    assert (unknown.content, unknown.ephemeral) == (INTERNAL, True)  # a code without a message yet
    assert vault.content == ("A stored key cannot be decrypted with the bot's current encryption key; "
                             "ask the bot operator.")
    assert (bug.content, bug.ephemeral) == (INTERNAL, True)
    failed = [r for r in caplog.records if r.name == "bot.cogs.base" and r.levelno == logging.ERROR]
    assert [r.getMessage() for r in failed] == ["command /probe failed"]
    assert isinstance(failed[0].exc_info[1], RuntimeError)  # a bug keeps its traceback in the log


async def test_a_form_failure_becomes_the_localized_reply_and_logs_no_typed_text(fake_discord, bot_factory,
                                                                                caplog):
    fake = fake_discord
    bot = bot_factory()
    answers = {}
    async with running_bot(fake, bot) as run:
        await with_probe(bot)
        with caplog.at_level(logging.DEBUG):
            for failure in FAILURES:
                form = await command(run, fake, "probe-form", opt("failure", failure), locale="ja")
                answers[failure] = await submit_modal(run, fake, form, SECRET, locale="ja")
    assert {name: (a.content, a.ephemeral) for name, a in answers.items()} == {
        "known": ("ラベル `main` はこのプロバイダーで使用済みです。何も保存していません。", True),
        "unknown": ("問題が発生しました。何も保存していません。もう一度お試しください。", True),
        "vault": ("保存済みのキーを現在の暗号鍵で復号できません。ボットの運営者に連絡してください。", True),
        "bug": ("問題が発生しました。何も保存していません。もう一度お試しください。", True),
    }
    assert "form ProbeForm failed with RuntimeError" in caplog.text
    assert SECRET not in caplog.text


def raised_codes() -> set[str]:
    """Every literal code the repository can raise: the first argument of a
    `RepositoryError(...)` or `conflicts_as(...)` call, each branch of a conditional too."""
    codes = set()
    for path in REPO_DIR.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in {"RepositoryError", "conflicts_as"} and node.args):
                continue
            codes |= {c.value for c in ast.walk(node.args[0])
                      if isinstance(c, ast.Constant) and isinstance(c.value, str)}
    return codes


def test_every_repository_refusal_has_its_own_message():
    """The generic line is a safety net; each refusal the repository knows gets its own."""
    codes = raised_codes()
    assert {"unknown_provider", "label_taken", "pool_full"} <= codes  # the scan really found them
    assert codes - set(ERROR_KEYS) == set()
