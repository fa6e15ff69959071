"""Three `python -m bot` processes, one shard each, on one PostgreSQL database, against the
sharded fake Discord (three shards, a guild on each, `max_concurrency` 1, Discord's 5 s
identify spacing enforced).

First the fake's own rules, through raw gateway sockets (no database needed). Then the
three processes, started at the same instant:
- they identify at least 5 s apart in the one bucket, with no INVALID_SESSION (the
  identify gate, `bot.load.identify`);
- what one process writes applies in another within CONFIG_POLL_SECONDS + 1 s: the
  operator's default key that one process rested on a 429 is skipped by another; a
  server's `/keys add` and `/channels deny` made through the process of the guild's shard
  hold for its next question on another shard (the fake moves the guild between the
  command and the question, as a reshard moves one);
- answers streaming on every shard at once keep the three processes' Discord requests
  within the global limit they split by their shards (DISCORD_GLOBAL_RATE), with no 429.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from pathlib import Path
from typing import Any

import aiohttp
from cryptography.fernet import Fernet

from providers.i18n import t
from tests.support.data_errors import openai_error
from tests.support.data_openai import openai_stream
from tests.support.drive_commands import MANAGE_SERVER, CommandReply, modal_fields, opt, sub
from tests.support.drive_shard_processes import (
    ShardProcesses,
    answered,
    ask,
    most_in_any_second,
    postgres_database_url,
    replies_to,
    shard_processes,
)
from tests.support.fake_discord_server import BOT_TOKEN, FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer, Reply, Trickle

SHARDS = 3
GLOBAL_RATE = 12  # Discord's global limit in this run: 4 requests/s for each process's one shard
POLL = 1.0  # CONFIG_POLL_SECONDS
RATE_LIMIT = {"message": "Rate limit reached for requests", "code": "rate_limit_exceeded", "kind": "requests"}
BURST_CHANNELS = 5  # answers streaming at once in each guild


# ---- the fake's sharding, through raw gateway sockets -----------------------------------------
async def frames(ws: aiohttp.ClientWebSocketResponse, quiet: float = 0.3) -> list[dict[str, Any]]:
    """Every frame the socket gets until it is quiet for `quiet` seconds."""
    got = []
    with contextlib.suppress(TimeoutError):
        while True:
            got.append(json.loads((await ws.receive(timeout=quiet)).data))
    return got


async def identify(http: aiohttp.ClientSession, fake: FakeDiscord, shard: int) -> aiohttp.ClientWebSocketResponse:
    ws = await http.ws_connect(fake.gateway_url)
    assert (await ws.receive_json())["op"] == 10  # HELLO
    await ws.send_json({"op": 2, "d": {"token": BOT_TOKEN, "intents": 0, "properties": {},
                                       "shard": [shard, SHARDS]}})
    return ws


def events(got: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    """(event, its guild) of each dispatch."""
    return [(f["t"], f["d"]["id"] if f["t"] == "GUILD_CREATE" else f["d"].get("guild_id"))
            for f in got if f["op"] == 0]


async def test_the_fake_routes_each_guild_to_its_shard_and_spaces_identifies() -> None:
    async with FakeDiscord(shards=SHARDS) as fake, aiohttp.ClientSession() as http:
        guilds = [fake.guild_on_shard(shard) for shard in range(SHARDS)]
        assert [(int(g) >> 22) % SHARDS for g in guilds] == [0, 1, 2]
        async with http.get(f"{fake.api_url}/gateway/bot") as response:
            limits = await response.json()
        assert (limits["shards"], limits["session_start_limit"]["max_concurrency"]) == (SHARDS, 1)
        first = await identify(http, fake, 0)
        second = await identify(http, fake, 1)  # the same bucket at once: refused
        assert [(f["t"], [g["id"] for g in f["d"]["guilds"]]) for f in await frames(first) if f["t"] == "READY"] == [
            ("READY", [guilds[0]])]
        assert [(f["op"], f["d"]) for f in await frames(second)] == [(9, False)]
        assert [(r.shard_id, r.accepted) for r in fake.identifies] == [(0, True), (1, False)]
        assert fake.invalid_sessions == fake.identifies[1:] and fake.ready_shards() == {0}

    async with FakeDiscord(shards=SHARDS, max_concurrency=SHARDS) as fake, aiohttp.ClientSession() as http:
        guilds = [fake.guild_on_shard(shard) for shard in range(SHARDS)]
        sockets = [await identify(http, fake, shard) for shard in range(SHARDS)]  # three buckets: all at once
        ready = [events(await frames(ws)) for ws in sockets]
        assert ready == [[("READY", None), ("GUILD_CREATE", g)] for g in guilds] and fake.invalid_sessions == []
        await fake.send_user_message("hello", channel_id=fake.text_channels(guilds[2])[0])
        await fake.send_interaction(name="ping", channel_id=fake.text_channels(guilds[1])[1])
        await fake.send_user_message("a DM", dm=True)
        got = [events(await frames(ws)) for ws in sockets]
        assert got == [[("MESSAGE_CREATE", None)], [("INTERACTION_CREATE", guilds[1])],
                       [("MESSAGE_CREATE", guilds[2])]]
        await fake.move_guild(guilds[2], 1)
        await fake.send_user_message("moved", channel_id=fake.text_channels(guilds[2])[0])
        got = [events(await frames(ws)) for ws in sockets]
        assert got == [[], [("GUILD_CREATE", guilds[2]), ("MESSAGE_CREATE", guilds[2])], []]
        for ws in sockets:
            await ws.close()


# ---- three processes ---------------------------------------------------------------------------
def keys_for(server: ProviderReplayServer, tag: str) -> list[str | None]:
    """The API keys of the provider requests one question made (by the tag in its text)."""
    return [r.api_key for r in server.requests if f"[{tag}]" in json.dumps((r.json or {}).get("messages", [])[-1:])]


async def slash(run: ShardProcesses, channel_id: str, name: str = "", *options: dict[str, Any],
                resolved: dict[str, Any] | None = None, form: CommandReply | None = None,
                value: str = "") -> CommandReply:
    """A manager's command (or, with `form` and `value`, its modal submitted) in `channel_id`;
    the reply of whichever process serves the channel's guild now."""
    fake = run.fake
    if form is None:
        payload = await fake.send_interaction(name=name, options=list(options), permissions=MANAGE_SERVER,
                                              channel_id=channel_id, resolved=resolved)
    else:
        custom_id, [field] = modal_fields(form)
        payload = await fake.send_interaction(modal_custom_id=custom_id, modal_values={field: value},
                                              permissions=MANAGE_SERVER, channel_id=channel_id)
    token = payload["token"]

    def response() -> dict[str, Any] | None:
        return next((r for r in fake.interaction_responses if r["token"] == token), None)

    def texts() -> list[str]:
        return [m.content for m in fake.messages.values() if m.webhook_token == token and m.content]

    await run.wait_for(lambda: (r := response()) is not None and (r["type"] != 5 or bool(texts())))
    reply = response()
    data = reply.get("data") or {}  # type: ignore[union-attr]
    content = data.get("content", "") if reply["type"] != 5 else texts()[-1]  # type: ignore[index]
    return CommandReply(reply["type"], content, True, data)  # type: ignore[index]


async def settle(since: float) -> None:
    """Until CONFIG_POLL_SECONDS + 1 s after `since`: another process must have applied it."""
    await asyncio.sleep(max(0.0, since + POLL + 1.0 - time.monotonic()))


async def test_three_processes_identify_in_turn_and_share_settings_and_the_global_limit(
        provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    server = provider_server
    started = time.monotonic()
    async with postgres_database_url() as database_url, FakeDiscord(shards=SHARDS, global_limit=GLOBAL_RATE) as fake:
        a, b, c = (fake.guild_on_shard(shard) for shard in range(SHARDS))
        fake.populate(0, SHARDS * BURST_CHANNELS)  # the burst's askers (members of every guild)
        for guild in (a, b, c):
            fake.add_channels(guild, BURST_CHANNELS + 1 - len(fake.text_channels(guild)))
        b_general, b_room = fake.text_channels(b)[:2]
        shared = {"DATABASE_URL": database_url, "BOT_ENCRYPTION_KEY": Fernet.generate_key().decode(),
                  # A chat-completions default, as the guild's own custom endpoint below: one reply serves both.
                  "DEFAULT_TEXT_PROVIDER": "custom", "DEFAULT_TEXT_MODEL": "env-model",
                  "DEFAULT_TEXT_BASE_URL": f"{server.url}/v1", "DEFAULT_TEXT_API_KEYS": "sk-env-first,sk-env-second",
                  "ALLOW_PRIVATE_ENDPOINTS": "true", "CONFIG_POLL_SECONDS": str(POLL),
                  "DISCORD_GLOBAL_RATE": str(GLOBAL_RATE)}
        server.reply(openai_stream("Fine.", piece=3))
        async with shard_processes(fake, shared, tmp_path) as run:
            await run.wait_for(lambda: fake.ready_shards() == {0, 1, 2} and bool(fake.commands), timeout=60)
            ready_at = time.monotonic()

            # Key health: a key one process rested is skipped by another.
            warm = await ask(fake, fake.text_channels(c)[0], "warm-c")
            await run.wait_for(lambda: answered(fake, warm, "Fine."))
            server.reply(openai_error(429, **RATE_LIMIT), key="sk-env-first")
            rested = await ask(fake, fake.text_channels(a)[0], "rest-a")
            await run.wait_for(lambda: answered(fake, rested, "Fine."))
            await settle(time.monotonic())
            after = await ask(fake, fake.text_channels(c)[0], "after-c")
            await run.wait_for(lambda: answered(fake, after, "Fine."))

            # /keys add through shard 1's process; the guild's next question on shard 2.
            endpoint = await slash(run, b_general, "model",
                                   sub("endpoint", opt("base_url", f"{server.url}/v1"), opt("model", "guild-model")))
            await fake.move_guild(b, 2)
            keyless = await ask(fake, b_general, "keyless-b")
            await run.wait_for(lambda: answered(fake, keyless, "Fine."))
            await fake.move_guild(b, 1)
            form = await slash(run, b_general, "keys", sub("add", opt("provider", "custom"), opt("label", "main")))
            added = await slash(run, b_general, form=form, value="sk-guild-added")
            added_at = time.monotonic()
            await fake.move_guild(b, 2)
            await settle(added_at)
            keyed = await ask(fake, b_general, "keyed-b")
            await run.wait_for(lambda: answered(fake, keyed, "Fine."))

            # /channels deny through shard 1's process; the channel silent on shard 2.
            await fake.move_guild(b, 1)
            general = {"id": b_general, "type": 0, "name": "general", "guild_id": b,
                       "permissions": "2248473465835073", "position": 0, "nsfw": False, "parent_id": None}
            denied = await slash(run, b_general, "channels", sub("deny", {"type": 7, "name": "channel",
                                                                          "value": b_general}),
                                 resolved={"channels": {b_general: general}})
            denied_at = time.monotonic()
            await fake.move_guild(b, 2)
            await settle(denied_at)
            silent = await ask(fake, b_general, "denied-b")
            open_room = await ask(fake, b_room, "open-b")
            await run.wait_for(lambda: answered(fake, open_room, "Fine."))
            await asyncio.sleep(0.5)
            await fake.move_guild(b, 1)

            # Answers streaming on every shard at once, within the split global limit.
            server.reply(Reply(trickle=Trickle(rate=20.0, seconds=3.0)))
            burst_at = time.monotonic()
            rooms = [room for guild in (a, b, c) for room in fake.text_channels(guild)[1:]]
            burst = {f"burst-{i}": await ask(fake, room, f"burst-{i}", author=fake.crowd_members[i])
                     for i, room in enumerate(rooms)}

            def burst_done() -> bool:
                served = {tag: r.text for tag in burst for r in server.requests
                          if r.text is not None and f"[{tag}]" in json.dumps(r.json["messages"][-1])}
                return len(served) == len(burst) and all(answered(fake, q, served[tag]) for tag, q in burst.items())

            await run.wait_for(burst_done, timeout=60)
            burst_seconds = time.monotonic() - burst_at
        log = run.log()
    print(f"ready {ready_at - started:.1f} s after start; burst {burst_seconds:.1f} s; "
          f"identifies at {[round(r.at - started, 2) for r in fake.identifies]}")

    assert keys_for(server, "warm-c") == ["sk-env-first"]
    assert keys_for(server, "rest-a") == ["sk-env-first", "sk-env-second"]
    assert keys_for(server, "after-c") == ["sk-env-second"], "shard 2 did not see the key shard 0 rested"
    assert endpoint.content == f"Custom endpoint set: {server.url}/v1 with `guild-model`."
    assert added.content.startswith("Added custom key `main` (\u2026")
    assert keys_for(server, "keyless-b") != ["sk-guild-added"]
    assert keys_for(server, "keyed-b") == ["sk-guild-added"], "shard 2 did not see the key added on shard 1"
    assert denied.content == t("commands.channels.denied_one", "en", channel=f"<#{b_general}>")
    assert replies_to(fake, silent) == [] and keys_for(server, "denied-b") == [], \
        "shard 2 answered in a channel denied on shard 1"

    counted = [r.at for r in fake.requests if not r.path.startswith(("/interactions/", "/webhooks/"))]
    assert fake.global_rate_limited == [] and fake.rate_limited == [], [r.path for r in fake.rate_limited]
    assert most_in_any_second(counted) <= GLOBAL_RATE, most_in_any_second(counted)
    assert [p.returncode for p in run.processes] == [0, 0, 0], log
    assert "Traceback" not in log, log

    assert sorted(r.shard_id for r in fake.identifies) == [0, 1, 2] and fake.invalid_sessions == [], (
        f"identifies (shard, accepted): {[(r.shard_id, r.accepted) for r in fake.identifies]}")
    assert all(gap >= 5.0 for gap in fake.identify_gaps()[0]), fake.identify_gaps()
