"""`python -m bot ask "question"` as a self-hoster runs it: a real process, configured
only by environment variables, against the local replay provider (no Discord, no database)."""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from bot.terminal_sink import WITHDRAWN
from providers.i18n import t
from tests.support.data_errors import openai_error
from tests.support.data_openai import long_answer_with_code, openai_stream
from tests.support.data_openai_responses import responses_midstream_error, responses_stream
from tests.support.fake_provider_server import ProviderReplayServer

REPO_ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-ask-test-4f9d2c7e1b"


@dataclass
class Run:
    status: int
    stdout: str
    stderr: str
    # stdout as it arrived: one string per read of the pipe, so a test sees it stream.
    pieces: list[str]


async def run_ask(question: str | None, env: dict[str, str], workdir: Path, *, lang: str = "C.UTF-8") -> Run:
    """Run `python -m bot ask` in `workdir` (so no developer .env leaks in)."""
    full_env = {"PATH": os.environ.get("PATH", ""), "HOME": str(workdir), "PYTHONPATH": str(REPO_ROOT),
                "LANG": lang, "PYTHONIOENCODING": "utf-8", **env}
    args = [sys.executable, "-m", "bot", "ask"] + ([question] if question is not None else [])
    process = await asyncio.create_subprocess_exec(
        *args, cwd=workdir, env=full_env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    pieces: list[str] = []
    errors = asyncio.ensure_future(process.stderr.read())
    while chunk := await process.stdout.read(65536):
        pieces.append(chunk.decode())
    status = await asyncio.wait_for(process.wait(), 60)
    return Run(status, "".join(pieces), (await errors).decode(), pieces)


def route_to(server: ProviderReplayServer, **extra: str) -> dict[str, str]:
    """The operator's default route on the replay server: OpenAI, on the Responses API."""
    return {"DEFAULT_TEXT_PROVIDER": "openai", "DEFAULT_TEXT_MODEL": "gpt-fake",
            "DEFAULT_TEXT_BASE_URL": f"{server.url}/v1", "DEFAULT_TEXT_API_KEYS": KEY, **extra}


def words(text: str) -> list[str]:
    return text.split()


async def test_the_answer_streams_to_stdout_whole_and_in_order(
        provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    text = long_answer_with_code()  # 6,000 characters: three Discord messages, code split across two
    provider_server.reply(responses_stream(text, piece=60, event_delay=0.01))
    run = await run_ask("write a long answer", route_to(provider_server, PROVIDER_READ_INTERVAL_MS="0"), tmp_path)
    assert run.status == 0, run.stderr
    assert words(run.stdout) == words(text)  # message boundaries show as line breaks, nothing lost or repeated
    assert run.stdout.count("```") == text.count("```")  # the code split across messages prints as one block
    assert "▌" not in run.stdout
    assert len(run.pieces) > 3, run.pieces  # printed as it arrived, not at the end
    [request] = provider_server.requests
    assert request.api_key == KEY
    assert request.json["model"] == "gpt-fake"
    assert request.json["instructions"]  # the system prompt
    assert request.json["input"] == [{"role": "user", "content": "write a long answer"}]
    assert KEY not in run.stdout + run.stderr


async def test_a_refused_key_prints_the_headline_and_tips_without_the_key(
        provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    provider_server.reply(openai_error(401, f"Incorrect API key provided: {KEY}.", code="invalid_api_key",
                                       kind="invalid_request_error"))
    run = await run_ask("hello", route_to(provider_server), tmp_path)
    assert run.status == 1, run.stdout + run.stderr
    assert t("genai.stream.invalid_key_title", None) in run.stderr
    assert "•" in run.stderr  # the tips, as the embed's bullets
    assert "Incorrect API key provided" in run.stderr  # the provider's words, the key taken out
    assert KEY not in run.stdout + run.stderr
    assert "DEFAULT_TEXT_API_KEYS" in run.stderr.splitlines()[-1]  # and which setting to check


async def test_a_retry_after_a_broken_stream_says_the_first_text_was_withdrawn(
        provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    provider_server.reply(responses_midstream_error("The first words of a broken"), key=KEY)
    provider_server.reply(responses_stream("The whole answer from the second key."), key="sk-ask-second")
    run = await run_ask("hello", route_to(provider_server, DEFAULT_TEXT_API_KEYS=f"{KEY},sk-ask-second"), tmp_path)
    assert run.status == 0, run.stderr
    assert run.stdout == f"The first words of a broken\n{WITHDRAWN}\nThe whole answer from the second key.\n"
    assert [r.api_key for r in provider_server.requests] == [KEY, "sk-ask-second"]


async def test_a_custom_default_without_keys_is_asked_without_a_key(
        provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    """A local model server (Ollama, llama.cpp): no key at all. Its loopback address needs
    ALLOW_PRIVATE_ENDPOINTS=true today."""
    provider_server.reply(openai_stream("Local answer."))
    env = {"DEFAULT_TEXT_PROVIDER": "custom", "DEFAULT_TEXT_MODEL": "llama-local",
           "DEFAULT_TEXT_BASE_URL": f"{provider_server.url}/v1", "ALLOW_PRIVATE_ENDPOINTS": "true"}
    run = await run_ask("hello", env, tmp_path)
    assert run.status == 0, run.stderr
    assert run.stdout == "Local answer.\n"
    [request] = provider_server.requests
    assert "authorization" not in {name.lower() for name in request.headers}


async def test_the_headline_is_in_the_terminal_language(
        provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    provider_server.reply(openai_error(401, "Incorrect API key provided.", code="invalid_api_key"))
    run = await run_ask("hello", route_to(provider_server), tmp_path, lang="ja_JP.UTF-8")
    assert run.status == 1
    title = t("genai.stream.invalid_key_title", "ja")
    assert title != t("genai.stream.invalid_key_title", None)
    assert title in run.stderr


async def test_a_missing_provider_is_named_in_one_line(tmp_path: Path) -> None:
    run = await run_ask("hello", {"DEFAULT_TEXT_MODEL": "gpt-fake", "DEFAULT_TEXT_API_KEYS": KEY}, tmp_path)
    assert run.status == 2
    assert run.stdout == ""
    [line] = run.stderr.splitlines()
    assert line.startswith("Invalid setting DEFAULT_TEXT_PROVIDER")  # as `python -m bot` says it
    assert KEY not in run.stderr


async def test_a_missing_key_is_named_in_one_line(tmp_path: Path) -> None:
    run = await run_ask("hello", {"DEFAULT_TEXT_PROVIDER": "anthropic", "DEFAULT_TEXT_MODEL": "claude-x"}, tmp_path)
    assert run.status == 2
    [line] = run.stderr.splitlines()
    assert line.startswith("Invalid setting DEFAULT_TEXT_API_KEYS")


async def test_a_bad_setting_is_named_and_discord_token_is_not_needed(tmp_path: Path) -> None:
    run = await run_ask("hello", {"DEFAULT_TEXT_PROVIDER": "nosuch", "DEFAULT_TEXT_MODEL": "m"}, tmp_path)
    assert run.status == 2
    [line] = run.stderr.splitlines()
    assert line.startswith("Invalid setting DEFAULT_TEXT_PROVIDER")
    assert "DISCORD_TOKEN" not in run.stderr


HOSTILE = ("Title\x1b]0;pwned\x07 set, screen\x1b[2J cleared, \x9b31mred\x9b0m, "
           "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\, line\rover\x08\x7f, kept\ttab\nnext line")
SHOWN = "Title set, screen cleared, red, link, lineover, kept\ttab\nnext line"


def assert_no_control(text: str) -> None:
    controls = [ch for ch in text if (ord(ch) < 32 and ch not in "\n\t") or 0x7f <= ord(ch) <= 0x9f]
    assert controls == [], controls


async def test_the_models_terminal_control_sequences_are_not_printed(
        provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    """Streamed in 7-character deltas, so sequences also arrive cut across edits."""
    provider_server.reply(responses_stream(HOSTILE, piece=7, event_delay=0.005))
    run = await run_ask("hello", route_to(provider_server, PROVIDER_READ_INTERVAL_MS="0"), tmp_path)
    assert run.status == 0, run.stderr
    assert_no_control(run.stdout + run.stderr)
    assert "pwned" not in run.stdout and "evil.example" not in run.stdout
    assert run.stdout.strip() == SHOWN


async def test_a_providers_error_text_cannot_drive_the_terminal(
        provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    provider_server.reply(openai_error(400, "bad request\x1b]0;pwned\x07\x1b[2J\x9b2J here", code="bad",
                                       kind="invalid_request_error"))
    run = await run_ask("hello", route_to(provider_server), tmp_path)
    assert run.status == 1, run.stdout + run.stderr
    assert_no_control(run.stdout + run.stderr)
    assert "bad request" in run.stderr
