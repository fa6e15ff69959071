"""Sharding in the fake Discord, by Discord's rules (mixed into `FakeDiscord`).

- IDENTIFY carries `shard: [id, count]` (none: `[0, 1]`); the session serves that shard.
  A shard id outside the count closes the socket with 4010 (Invalid shard), as Discord does.
- A guild belongs to shard `(guild_id >> 22) % count` (Discord's formula). READY lists only
  the shard's guilds, GUILD_CREATE follows for each of them, and every later event that
  carries a `guild_id` (MESSAGE_CREATE, INTERACTION_CREATE, THREAD_CREATE, …) goes only to
  the session of the guild's shard; an event without a guild (a DM) goes to shard 0.
- `GET /gateway/bot` reports `shards` and `session_start_limit` with `max_concurrency`
  (`remaining` counts the identifies down).
- Identify spacing: Discord starts one session per rate-limit bucket
  (`shard_id % max_concurrency`) every 5 s. An IDENTIFY sooner than `identify_interval`
  after the bucket's last accepted one is answered INVALID_SESSION (op 9, `d: false`) and
  kept in `invalid_sessions`; every IDENTIFY is recorded in `identifies` (monotonic time,
  shard, bucket, accepted). Enforced by default when the fake has more than one shard; a
  single-shard fake records but accepts a quick reconnect, as it always did.
- `FakeDiscord(shards=n)` starts with at least one guild on every shard: the main
  `guild_id` on its own shard and one more guild (`add_guild`) for each other shard,
  `guild_on_shard(s)` names one. `add_channels(guild_id, n)` gives a guild more text
  channels (before the bot starts), `text_channels(guild_id)` lists them, general first,
  and `guild_of_channel` says whose a channel is: `send_user_message`, `send_interaction`
  and `press` put their event in the channel's guild. `ready_shards()` are the shards with
  a session open now.
- `move_guild(guild_id, shard)` is what a reshard does to one guild, not a Discord call:
  later events of the guild go to that shard's session, which gets the guild's
  GUILD_CREATE first. A test's way to let two processes serve one guild in turn.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

IDENTIFY_INTERVAL = 5.0  # seconds between two identifies of one bucket (Discord's rule)
INVALID_SHARD = 4010


@dataclass
class FakeGuild:
    """A guild besides the main one; `channels` are its text channels, "general" first."""

    id: str
    name: str
    channels: list[str] = field(default_factory=list)


@dataclass
class GatewaySession:
    """An identified gateway connection and the shard it serves."""

    ws: web.WebSocketResponse
    shard_id: int
    shard_count: int
    session_id: str
    ready_at: float


@dataclass(frozen=True)
class Identify:
    """One IDENTIFY as the fake received it (`at`: time.monotonic() of this process)."""

    at: float
    shard_id: int
    shard_count: int
    bucket: int
    accepted: bool


class FakeShards:
    """Shard routing and identify limits; `FakeDiscord` provides the gateway and payloads."""

    guild_id: str
    channel_id: str
    thought_channel_id: str
    dm_channel_id: str
    crowd_channels: list[str]
    threads: dict[str, dict[str, Any]]

    def _init_shards(self, shards: int, max_concurrency: int, identify_interval: float | None) -> None:
        if shards < 1 or max_concurrency < 1:
            raise ValueError("shards and max_concurrency are at least 1")
        self.shards = shards
        self.max_concurrency = max_concurrency
        # None: identify spacing not enforced (the single-shard default).
        self.identify_interval = identify_interval if identify_interval is not None or shards == 1 \
            else IDENTIFY_INTERVAL
        self.identifies: list[Identify] = []
        self.invalid_sessions: list[Identify] = []
        self.guilds: dict[str, FakeGuild] = {}  # the guilds besides the main `guild_id`
        self._guild_deletes: set[asyncio.Task[Any]] = set()
        self.refuse_leaving = False  # a test's way to make leaving a guild fail (500)
        self._moved: dict[str, int] = {}
        self._sessions: dict[web.WebSocketResponse, GatewaySession] = {}
        self._known_sessions: dict[str, GatewaySession] = {}  # by session id, for RESUME
        self._bucket_last: dict[int, float] = {}
        self._session_ids = itertools.count(1)
        for shard in range(shards):
            if not self.guild_ids_on(shard):
                self.add_guild(shard)

    # ---- guilds ------------------------------------------------------------------------
    def all_guild_ids(self) -> list[str]:
        return [self.guild_id, *self.guilds]

    def shard_of(self, guild_id: str | int, count: int | None = None) -> int:
        """The shard whose session gets the guild's events (moved guilds where they went)."""
        gid = str(guild_id)
        if gid in self._moved:
            return self._moved[gid]
        return (int(gid) >> 22) % (count or self.shards)

    def guild_ids_on(self, shard: int, count: int | None = None) -> list[str]:
        return [g for g in self.all_guild_ids() if self.shard_of(g, count) == shard]

    def guild_on_shard(self, shard: int) -> str:
        """A guild of `shard` (the main guild when it is there)."""
        found = self.guild_ids_on(shard)
        if not found:
            raise AssertionError(f"the fake has no guild on shard {shard}")
        return found[0]

    def add_guild(self, shard: int, channels: int = 2) -> FakeGuild:
        """A new guild whose id Discord's formula puts on `shard`, with `channels` text channels."""
        from tests.support.fake_discord_server import snowflake

        base = int(snowflake())
        stamp = base >> 22
        stamp += (shard - stamp) % self.shards
        guild = FakeGuild(str((stamp << 22) | (base & 0x3FFFFF)), f"Guild {len(self.guilds) + 2}")
        self.guilds[guild.id] = guild
        self.add_channels(guild.id, channels)
        return guild

    def add_channels(self, guild_id: str, count: int) -> list[str]:
        """`count` more text channels in the guild (before its GUILD_CREATE is sent)."""
        from tests.support.fake_discord_server import snowflake

        made = [snowflake() for _ in range(count)]
        if str(guild_id) == self.guild_id:
            self.crowd_channels.extend(made)
        else:
            self.guilds[str(guild_id)].channels.extend(made)
        return made

    def text_channels(self, guild_id: str) -> list[str]:
        """A guild's text channels, its general channel first (the main guild's thought-log aside)."""
        if str(guild_id) == self.guild_id:
            return [self.channel_id, *self.crowd_channels]
        return list(self.guilds[str(guild_id)].channels)

    def guild_of_channel(self, channel_id: str | int) -> str | None:
        """The guild a channel (or thread) is in; None for the DM channel."""
        cid = str(channel_id)
        if cid == self.dm_channel_id:
            return None
        for guild in self.guilds.values():
            if cid in guild.channels:
                return guild.id
        thread = self.threads.get(cid)
        return str(thread["guild_id"]) if thread else self.guild_id

    def guild_channel(self, cid: str) -> dict[str, Any] | None:
        """The channel object of an extra guild's channel (None for the main guild's)."""
        for guild in self.guilds.values():
            if cid in guild.channels:
                position = guild.channels.index(cid)
                name = "general" if position == 0 else f"room-{position}"
                return self._channel(cid, name, position, guild.id)  # type: ignore[attr-defined]
        return None

    def extra_guild_payload(self, guild: FakeGuild) -> dict[str, Any]:
        """GUILD_CREATE of an extra guild: the main guild's shape, its own id and channels."""
        payload = self.guild_payload()  # type: ignore[attr-defined]
        roles = [{**role, "id": guild.id} if role["id"] == self.guild_id else role for role in payload["roles"]]
        return {**payload, "id": guild.id, "name": guild.name, "roles": roles, "threads": [],
                "channels": [self.guild_channel(cid) for cid in guild.channels]}

    def payload_of_guild(self, guild_id: str) -> dict[str, Any]:
        if guild_id == self.guild_id:
            return self.guild_payload()  # type: ignore[attr-defined]
        return self.extra_guild_payload(self.guilds[guild_id])

    async def join_guild(self, shard: int = 0) -> FakeGuild:
        """Someone adds the running bot to a new guild: its GUILD_CREATE to the shard's session."""
        guild = self.add_guild(shard)
        for session in list(self._sessions.values()):
            if session.shard_id == self.shard_of(guild.id, session.shard_count):
                await self._send(session.ws, "GUILD_CREATE", self.payload_of_guild(guild.id))  # type: ignore[attr-defined]
        return guild

    def _leave_guild(self, guild_id: str) -> tuple[int, Any]:
        """The bot leaves a guild (204): recorded in `left_guilds`, and its GUILD_DELETE
        follows on the guild's session, as Discord sends it."""
        if guild_id not in self.all_guild_ids() or guild_id in self.left_guilds:  # type: ignore[attr-defined]
            return 404, {"message": "Unknown Guild", "code": 10004}
        if self.refuse_leaving:
            return 500, {"message": "500: Internal Server Error", "code": 0}
        self.left_guilds.append(guild_id)  # type: ignore[attr-defined]
        targets = [s.ws for s in self._sessions.values() if s.shard_id == self.shard_of(guild_id, s.shard_count)]
        sends = [self._send(ws, "GUILD_DELETE", {"id": guild_id}) for ws in targets]  # type: ignore[attr-defined]
        if sends:  # after this response, as Discord's event follows its 204
            self._guild_deletes.add(task := asyncio.get_running_loop().create_task(asyncio.gather(*sends)))
            task.add_done_callback(self._guild_deletes.discard)
        return 204, None

    async def move_guild(self, guild_id: str | int, shard: int) -> None:
        """A reshard's effect on one guild: its events go to `shard`'s session from now on,
        which gets the guild's GUILD_CREATE first (the old session is left as it is)."""
        gid = str(guild_id)
        self._moved[gid] = shard
        for session in list(self._sessions.values()):
            if session.shard_id == shard:
                await self._send(session.ws, "GUILD_CREATE", self.payload_of_guild(gid))  # type: ignore[attr-defined]

    # ---- sessions ----------------------------------------------------------------------
    def ready_shards(self) -> set[int]:
        """The shards with an identified session open now."""
        return {session.shard_id for session in self._sessions.values()}

    def identify_gaps(self) -> dict[int, list[float]]:
        """Per bucket, the seconds between consecutive identifies (accepted or not)."""
        gaps: dict[int, list[float]] = {}
        last: dict[int, float] = {}
        for record in self.identifies:
            if record.bucket in last:
                gaps.setdefault(record.bucket, []).append(record.at - last[record.bucket])
            else:
                gaps.setdefault(record.bucket, [])
            last[record.bucket] = record.at
        return gaps

    def gateway_bot_payload(self, url: str) -> dict[str, Any]:
        return {"url": url, "shards": self.shards,
                "session_start_limit": {"total": 1000, "remaining": max(1000 - len(self.identifies), 0),
                                        "reset_after": 0, "max_concurrency": self.max_concurrency}}

    async def _identify(self, ws: web.WebSocketResponse, data: dict[str, Any]) -> GatewaySession | None:
        """Check and record one IDENTIFY; the new session, or None when it was refused
        (the socket then got INVALID_SESSION or was closed)."""
        shard_id, count = data.get("shard") or [0, 1]
        if not 0 <= shard_id < count:
            await ws.close(code=INVALID_SHARD, message=b"Invalid shard.")
            return None
        now = time.monotonic()
        bucket = shard_id % self.max_concurrency
        last = self._bucket_last.get(bucket)
        accepted = self.identify_interval is None or last is None or now - last >= self.identify_interval
        record = Identify(now, shard_id, count, bucket, accepted)
        self.identifies.append(record)
        if not accepted:
            self.invalid_sessions.append(record)
            await ws.send_str(json.dumps({"op": 9, "d": False, "s": None, "t": None}))
            return None
        self._bucket_last[bucket] = now
        session = GatewaySession(ws, shard_id, count, f"fake-session-{next(self._session_ids)}", now)
        self._sessions[ws] = session
        self._known_sessions[session.session_id] = session
        return session

    def _resume(self, ws: web.WebSocketResponse, data: dict[str, Any]) -> None:
        """A RESUME serves the shard of the session it names (shard 0 of 1 if unknown)."""
        old = self._known_sessions.get(str(data.get("session_id")))
        session = GatewaySession(ws, old.shard_id if old else 0, old.shard_count if old else 1,
                                 old.session_id if old else "fake-session", time.monotonic())
        self._sessions[ws] = session

    def _closed(self, ws: web.WebSocketResponse) -> None:
        self._sessions.pop(ws, None)

    def _targets(self, data: Any) -> list[web.WebSocketResponse]:
        """The sessions an event goes to: its guild's shard, or shard 0 without a guild."""
        gid = data.get("guild_id") if isinstance(data, dict) else None
        return [s.ws for s in list(self._sessions.values())
                if s.shard_id == (0 if gid is None else self.shard_of(gid, s.shard_count))]
