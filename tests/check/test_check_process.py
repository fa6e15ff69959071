"""`python -m bot check` as an operator runs it: a real process configured only by
environment variables, against the local replay provider (no Discord, no database)."""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from providers.i18n import t
from tests.support.data_check import IMAGE_REFUSED, AnthropicChecks
from tests.support.fake_provider_server import ProviderReplayServer, Reply

REPO_ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-ant-operator-check-4e1d"
ROWS = ["Streamed text", "Tool call round trip", "Reasoning shown", "Web search", "Image", "PDF"]


@dataclass
class Run:
    status: int
    stdout: str
    stderr: str


async def run_check(env: dict[str, str], workdir: Path, *args: str) -> Run:
    """Run `python -m bot check` in `workdir` (so no developer .env leaks in)."""
    full_env = {"PATH": os.environ.get("PATH", ""), "HOME": str(workdir), "PYTHONPATH": str(REPO_ROOT),
                "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8", **env}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "check", *args, cwd=workdir, env=full_env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    stdout, stderr = await asyncio.wait_for(process.communicate(), 90)
    assert process.returncode is not None
    return Run(process.returncode, stdout.decode(), stderr.decode())


def claude_default(server: ProviderReplayServer, **extra: str) -> dict[str, str]:
    """The operator's default route: Claude behind the operator's own address (the replay server)."""
    return {"DEFAULT_TEXT_PROVIDER": "anthropic", "DEFAULT_TEXT_MODEL": "claude-sonnet-4-5",
            "DEFAULT_TEXT_BASE_URL": server.url, "DEFAULT_TEXT_API_KEYS": KEY, **extra}


def marks(stdout: str) -> dict[str, str]:
    return {name: line[0] for line in stdout.splitlines() for name in ROWS if line[2:].startswith(name + " ")}


async def test_every_check_passes_on_a_healthy_default_route(
        provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    provider_server.chooser = AnthropicChecks()
    run = await run_check(claude_default(provider_server, WEB_SEARCH="true"), tmp_path)
    assert run.status == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "Check of the bot's default route (DEFAULT_TEXT_*): anthropic / claude-sonnet-4-5 · key: …4e1d"
    assert marks(run.stdout) == dict.fromkeys(ROWS, "✓")
    assert len(provider_server.requests) == 7 and {r.api_key for r in provider_server.requests} == {KEY}
    assert KEY not in run.stdout + run.stderr


async def test_a_failed_check_exits_1_with_its_kind_its_fixes_and_the_settings_used(
        provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    provider_server.chooser = AnthropicChecks({"image": Reply.error(400, IMAGE_REFUSED)})
    run = await run_check(claude_default(provider_server), tmp_path)
    assert run.status == 1, run.stdout + run.stderr
    assert marks(run.stdout) == {**dict.fromkeys(ROWS, "✓"), "Web search": "–", "Image": "✗"}
    [image] = [line for line in run.stdout.splitlines() if line.startswith("✗ Image")]
    assert image.endswith("— request_refused: Anthropic rejected the request. Could not process image")
    assert f"How to fix:\n• {t('genai.tips.verify_api_key_terminal', None)}" in run.stdout  # the .env form
    assert "/keys" not in run.stdout and "/model" not in run.stdout  # no Discord command in a terminal
    assert "DEFAULT_TEXT_API_KEYS" in run.stderr.splitlines()[-1]  # which settings the check used
    assert KEY not in run.stdout + run.stderr


async def test_without_a_default_route_one_line_names_the_settings(tmp_path: Path) -> None:
    run = await run_check({}, tmp_path)
    assert run.status == 2 and run.stdout == ""
    [line] = run.stderr.splitlines()
    assert line.startswith("DEFAULT_TEXT_PROVIDER is not set: put DEFAULT_TEXT_PROVIDER=")
    missing_key = await run_check({"DEFAULT_TEXT_PROVIDER": "anthropic", "DEFAULT_TEXT_MODEL": "claude-x"}, tmp_path)
    assert missing_key.status == 2
    [line] = missing_key.stderr.splitlines()
    assert line.startswith("Invalid setting DEFAULT_TEXT_API_KEYS")
