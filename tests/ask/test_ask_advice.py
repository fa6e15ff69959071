"""What `python -m bot ask` tells the operator when the default route fails or is silent:
the advice names the `.env` settings they control, never a Discord command; a provider
that sends nothing gets one waiting line within seconds, and the end names the address
and the wait. The real process against the local replay provider."""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from providers.i18n import t
from tests.ask.test_ask_process import KEY, REPO_ROOT, route_to
from tests.support.data_errors import openai_error
from tests.support.data_openai_responses import responses_stream
from tests.support.fake_provider_server import ProviderReplayServer, Reply

WAITING = "Waiting for OpenAI at "


@dataclass
class TimedRun:
    status: int
    stdout: str
    stderr: str
    # (seconds after the question reached the provider, line) for each line of stderr
    stderr_lines: list[tuple[float, str]] = field(default_factory=list)
    ended: float = 0.0  # seconds after the question reached the provider


async def run_timed(server: ProviderReplayServer, env: dict[str, str], workdir: Path) -> TimedRun:
    """`python -m bot ask hello`, its stderr lines timed from the moment the provider got the
    question (process start-up, which varies, is not counted)."""
    full_env = {"PATH": os.environ.get("PATH", ""), "HOME": str(workdir), "PYTHONPATH": str(REPO_ROOT),
                "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8", **env}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "ask", "hello", cwd=workdir, env=full_env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    loop = asyncio.get_running_loop()
    asked: list[float] = []

    async def watch_requests() -> None:
        while not server.requests:
            await asyncio.sleep(0.01)
        asked.append(loop.time())

    watcher = asyncio.ensure_future(watch_requests())
    lines: list[tuple[float, str]] = []
    stdout = asyncio.ensure_future(process.stdout.read())
    while line := await process.stderr.readline():
        lines.append((loop.time(), line.decode()))
    status = await asyncio.wait_for(process.wait(), 60)
    ended = loop.time()
    watcher.cancel()
    start = asked[0] if asked else ended
    return TimedRun(status, (await stdout).decode(), "".join(text for _, text in lines),
                    [(at - start, text.rstrip("\n")) for at, text in lines], ended - start)


async def test_a_refused_key_is_advised_in_env_settings_never_slash_commands(
        provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    provider_server.reply(openai_error(401, "Incorrect API key provided.", code="invalid_api_key",
                                       kind="invalid_request_error"))
    run = await run_timed(provider_server, route_to(provider_server), tmp_path)
    assert run.status == 1, run.stdout + run.stderr
    assert t("genai.stream.invalid_key_title", None) in run.stderr
    assert f"• {t('genai.tips.verify_api_key_terminal', None)}" in run.stderr
    assert f"• {t('genai.tips.switch_model_provider_terminal', None)}" in run.stderr
    assert "DEFAULT_TEXT_API_KEYS (.env)" in run.stderr
    assert "/keys" not in run.stderr and "/model" not in run.stderr and "`/" not in run.stderr
    assert KEY not in run.stdout + run.stderr


async def test_a_silent_provider_gets_a_waiting_line_then_its_address_and_the_wait(
        provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    """The provider takes the question and holds the connection without a byte (a hung
    model server). FIRST_TOKEN_DEADLINE_SECONDS=6 stands in for the default 90."""
    provider_server.reply(Reply(first_byte_delay=10))  # past the deadline, not past the test
    run = await run_timed(provider_server, route_to(provider_server, FIRST_TOKEN_DEADLINE_SECONDS="6"), tmp_path)
    assert run.status == 1, run.stdout + run.stderr
    address = f"127.0.0.1:{provider_server.port}/v1"
    waiting = [(at, line) for at, line in run.stderr_lines if line.startswith(WAITING)]
    assert [line for _, line in waiting] == [f"{WAITING}{address}… (at most 6 s; Ctrl-C to stop)"]  # once
    [(at, _)] = waiting
    assert 2.0 <= at <= 5.0, run.stderr_lines  # within seconds, long before the deadline
    assert f"OpenAI at {address} sent nothing for 6 s." in run.stderr
    assert t("genai.tips.silent_server_terminal", None) in run.stderr
    assert t("genai.tips.check_base_url_terminal", None) in run.stderr
    assert t("genai.tips.shorten_message", None) not in run.stderr  # silence is not the question's length
    assert t("genai.tips.refresh_context", None) not in run.stderr
    assert "no content from the provider" not in run.stderr  # the headline says it, in the reader's words
    assert 5.5 <= run.ended <= 9.0, run.ended  # it ends at the deadline, not long after
    assert run.stdout == ""
    assert len(provider_server.requests) == 1  # one key, one attempt


async def test_an_answer_that_starts_within_seconds_gets_no_waiting_line(
        provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    provider_server.reply(responses_stream("A prompt answer.").with_options(first_byte_delay=1.0))
    run = await run_timed(provider_server, route_to(provider_server), tmp_path)
    assert run.status == 0, run.stderr
    assert run.stdout == "A prompt answer.\n"
    assert WAITING not in run.stderr and run.stderr == ""
