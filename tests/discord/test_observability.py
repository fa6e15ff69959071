"""METRICS_PORT: `/healthz` and `/metrics` served on the real LLMBot's loop, against the fake
Discord and the replay provider; and the shared provider clients across two turns."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from bot.load.observability import Observability, gateway_connected, request_kind
from tests.support.check_answers import delivered, plain_answer_messages
from tests.support.data_openai import openai_stream
from tests.support.drive_discord_client import llmbot_factory, running_bot
from tests.support.env_bot_config import configure_server
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def get(port: int, path: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}{path}") as response:
        return response.status, await response.text()


async def samples(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample /metrics serves, by name and sorted labels."""
    status, body = await get(port, "/metrics")
    assert status == 200
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(body) for s in family.samples}


def value(found: dict, name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


def bot_on(tmp_path: Path, port: int, **env: str):
    return llmbot_factory(tmp_path / "data", "health.sqlite3")(METRICS_PORT=str(port),
                                                                ALLOW_PRIVATE_ENDPOINTS="true", **env)


async def test_healthz_is_ready_and_503_once_the_database_is_gone(fake_discord: FakeDiscord, tmp_path):
    port = free_port()
    bot = bot_on(tmp_path, port)
    async with running_bot(fake_discord, bot):
        status, body = await get(port, "/healthz")
        assert (status, body) == (200, '{"ready": true, "gateway": true, "database": true}')
        await bot.engine.dispose()  # no open connection survives the folder
        shutil.rmtree(tmp_path / "data")
        status, body = await get(port, "/healthz")
        assert (status, body) == (503, '{"ready": false, "gateway": true, "database": false}')
    assert bot.observability is not None and bot.observability._runner is None  # stopped with the bot


async def test_healthz_is_503_before_the_gateway_connects(tmp_path):
    bot = bot_on(tmp_path, free_port())
    server = Observability(bot, 0, host="127.0.0.1")
    await server.start()
    try:
        status, body = await get(server.port, "/healthz")
        assert (status, body) == (503, '{"ready": false, "gateway": false, "database": true}')
    finally:
        await server.stop()
        await bot.engine.dispose()  # never started: nothing else to close


async def test_metrics_show_the_answer_timings_and_shared_clients(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, tmp_path) -> None:
    fake, server = fake_discord, provider_server
    text = "A slow answer, so the gauge sees it streaming."
    server.reply(openai_stream(text, piece=6, event_delay=0.05), key="sk-pool-first")
    server.reply(openai_stream("The second member's answer.", piece=6), key="sk-member-two")
    port = free_port()
    bot = bot_on(tmp_path, port)
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        before = await samples(port)
        await fake.send_user_message(f"<@{fake.bot_user['id']}> hello", mention_bot=True)
        await run.wait_for(lambda: bool(plain_answer_messages(fake)))
        during = await samples(port)
        await run.wait_for(lambda: delivered(fake, text))
        [shared] = [c for k, c in bot.access.clients.shared().items() if k.family == "openai_compat"]  # the HTTP client
        held = list(bot.access.clients.shared().values())  # with the keyless SDK client on it
        # A second turn with another key of the same endpoint reuses the same clients.
        await _configure_keys(bot, fake, ("sk-member-two",))
        await fake.send_user_message(f"<@{fake.bot_user['id']}> again", mention_bot=True)
        await run.wait_for(lambda: len(plain_answer_messages(fake)) == 2
                           and "▌" not in plain_answer_messages(fake)[-1].content)
        assert list(bot.access.clients.shared().values()) == held and not shared.is_closed
        await run.wait_for(lambda: len(bot.load.answers) == 0)  # the turn ends just after its last edit
        after = await samples(port)
    assert [r.api_key for r in server.requests] == ["sk-pool-first", "sk-member-two"]
    assert shared.is_closed  # the bot closed its pool
    assert value(during, "answers_in_flight") == 1 and value(after, "answers_in_flight") == 0
    for name, labels in [("answer_first_message_seconds_count", {}),
                         ("provider_first_token_seconds_count", {"provider": "custom"})]:
        assert value(after, name, **labels) - value(before, name, **labels) == 2, name
    assert value(after, "event_loop_lag_seconds_count") > value(before, "event_loop_lag_seconds_count")
    sent = ("discord_requests_total", {"kind": "send", "status": "2xx"})
    assert value(after, *sent[:1], **sent[1]) - value(before, *sent[:1], **sent[1]) >= 2
    edits = value(after, "discord_requests_total", kind="edit", status="2xx")
    assert edits > value(before, "discord_requests_total", kind="edit", status="2xx")


async def _configure_keys(bot, fake: FakeDiscord, keys: tuple[str, ...]) -> None:
    """Replace the server's key pool (the first pool's keys are removed)."""
    from sqlalchemy import delete

    from bot import repo
    from bot.db.models import ServerApiKey

    async with bot.sessions() as session, session.begin():
        await session.execute(delete(ServerApiKey))
        for secret in keys:
            await repo.add_server_key(session, bot.vault, int(fake.guild_id), "custom", secret)


def test_request_kinds_are_a_closed_vocabulary():
    assert request_kind("POST", "/api/v10/channels/123/messages") == "send"
    assert request_kind("PATCH", "/api/v10/channels/123/messages/456") == "edit"
    assert request_kind("DELETE", "/api/v10/channels/123/messages/456") == "delete"
    assert request_kind("POST", "/api/v10/channels/123/typing") == "typing"
    assert request_kind("POST", "/api/v10/interactions/1/tok/callback") == "interaction"
    assert request_kind("GET", "/api/v10/users/@me") == "other"


class _Shard:
    def __init__(self, closed: bool = False) -> None:
        self.closed = closed

    def is_closed(self) -> bool:
        return self.closed


class _Sharded:
    """What /healthz reads of a bot running some shards."""

    def __init__(self, shard_ids: list[int] | None, shard_count: int | None, shards: dict[int, _Shard]) -> None:
        self.shard_ids, self.shard_count, self.shards = shard_ids, shard_count, shards

    def is_closed(self) -> bool:
        return False

    def is_ready(self) -> bool:
        return True


def test_healthz_wants_every_shard_of_the_process_connected() -> None:
    assert gateway_connected(_Sharded([0, 2], 3, {0: _Shard(), 2: _Shard()}))
    assert not gateway_connected(_Sharded([0, 2], 3, {0: _Shard()}))  # shard 2 not connected yet
    assert not gateway_connected(_Sharded([0, 2], 3, {0: _Shard(), 2: _Shard(closed=True)}))  # reconnecting
    assert gateway_connected(_Sharded(None, 2, {0: _Shard(), 1: _Shard()}))  # every shard in one process
    assert not gateway_connected(_Sharded(None, 2, {0: _Shard()}))
    assert gateway_connected(_Sharded(None, None, {0: _Shard()}))
