"""A fake Discord for the real discord.py client: REST under `/api/v10`, gateway at `/gw`.

It speaks exactly what discord.py 2.7.1 needs: JSON bodies with a
`Content-Type` of exactly `application/json`, JSON-returning interaction callbacks,
plain JSON text frames on the gateway. Message routes have per-channel rate-limit
buckets that answer 429 the way Discord does (`Via` header, `retry_after`, `global`)
and count every 429, so tests can prove pacing never trips them. Discord's global limit
(`global_limit` requests per second across all routes, 50 by default as Discord's;
interaction callbacks and webhooks exempt) answers a global 429 and is counted apart in
`global_rate_limited` too; `global_counted` / `interaction_requests` count the requests on
either side of that line. Every message the bot writes is kept with its edit history,
embeds, files, `allowed_mentions` and message components (`components`, one set per
version in `component_history`), checked by Discord's component rules
(`fake_discord_components`: a 400 "Invalid Form Body" as Discord answers).

Interactions: every INTERACTION_CREATE the fake dispatches is remembered (`interactions`)
so its callback is answered as Discord does: once (a second answer: 400, code 40060), for a
known interaction only (`accept_unknown_interactions`), types 4/5 (a message, ephemeral
with flag 64: kept apart from the channel's visible messages), 6/7 (acknowledge / update
the message the pressed component is on), 8 and 9. `press(message_id, custom_id)` presses
a button that is on a message now. An autocomplete (type 4) is answered with choices
(type 8) only, within 3 s, as Discord holds it to: at most 25 choices, each name 1 to 100
characters and each string value 1 to 100 (a 400 "Invalid Form Body" otherwise).

Shards (`fake_discord_shards`): `FakeDiscord(shards=3, max_concurrency=1)` routes each
guild's events only to the session of the guild's shard (Discord's formula), reports the
shards on `/gateway/bot`, answers identifies of one bucket closer than 5 s with
INVALID_SESSION and records every identify (`identifies`, `invalid_sessions`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import WSMsgType, web

from tests.support.env_loopback import serve_on_loopback
from tests.support.fake_discord_components import (
    EPHEMERAL,
    IS_COMPONENTS_V2,
    buttons,
    component_errors,
    invalid_form_body,
    nest,
)
from tests.support.fake_discord_shards import FakeShards
from tests.support.fake_discord_threads import FakeThreads

BOT_TOKEN = "fake-token-123"
# Routes Discord does not count against the bot's global limit: interactions and their webhooks.
GLOBAL_EXEMPT = re.compile(r"/(interactions|webhooks)/")
_IDS = itertools.count(1_300_000_000_000_000_000)
SUPPRESS_EMBEDS, SUPPRESS_NOTIFICATIONS = 1 << 2, 1 << 12
# Message flags a request may set: a channel message never becomes ephemeral.
_SETTABLE_FLAGS = SUPPRESS_EMBEDS | SUPPRESS_NOTIFICATIONS | IS_COMPONENTS_V2
APP_PERMISSIONS = "2248473465835073"
AUTOCOMPLETE = 4  # the interaction type of an autocomplete, answered with callback type 8
AUTOCOMPLETE_RESULT = 8
AUTOCOMPLETE_DEADLINE = 3.0  # seconds Discord waits for an autocomplete's choices
MAX_CHOICES = 25
CHOICE_TEXT_LIMIT = 100


def snowflake() -> str:
    return str(next(_IDS))


def skip_ahead(seconds: float) -> None:
    """Later ids (snowflakes) carry a creation time `seconds` later. discord.py reads a
    message's time from its id, so a conversation can pause half an hour without waiting."""
    global _IDS
    _IDS = itertools.count(next(_IDS) + (round(seconds * 1000) << 22))


def _now_iso() -> str:
    return datetime.now(UTC).isoformat()


def json_response(obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    """discord.py parses JSON only when Content-Type is exactly application/json."""
    return web.Response(status=status, body=json.dumps(obj).encode(),
                        headers={"Content-Type": "application/json", **(headers or {})})


def choice_errors(choices: Any) -> dict[str, Any]:
    """Discord's form errors for an autocomplete's choices (empty: valid)."""
    too_long = {"code": "BASE_TYPE_MAX_LENGTH", "message": f"Must be {MAX_CHOICES} or fewer in length."}
    bad_length = {"code": "BASE_TYPE_BAD_LENGTH", "message": f"Must be between 1 and {CHOICE_TEXT_LIMIT} in length."}
    if not isinstance(choices, list):
        return {"choices": {"_errors": [{"code": "BASE_TYPE_REQUIRED", "message": "This field is required"}]}}
    if len(choices) > MAX_CHOICES:
        return {"choices": {"_errors": [too_long]}}
    errors: dict[str, Any] = {}
    for index, choice in enumerate(choices):
        fields = {}
        name = choice.get("name")
        if not isinstance(name, str) or not 1 <= len(name) <= CHOICE_TEXT_LIMIT:
            fields["name"] = {"_errors": [bad_length]}
        value = choice.get("value")
        if isinstance(value, str) and not 1 <= len(value) <= CHOICE_TEXT_LIMIT:
            fields["value"] = {"_errors": [bad_length]}
        if fields:
            errors[str(index)] = fields
    return {"choices": errors} if errors else {}


@dataclass
class StoredMessage:
    """A message as the fake holds it; `history` is every content it had, oldest first."""

    id: str
    channel_id: str
    author: dict[str, Any]
    content: str
    embeds: list[dict[str, Any]] = field(default_factory=list)
    attachments: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)
    allowed_mentions: dict[str, Any] | None = None
    message_reference: dict[str, Any] | None = None
    history: list[str] = field(default_factory=list)
    edit_times: list[float] = field(default_factory=list)  # monotonic, one per edit
    created_at: float = field(default_factory=time.monotonic)
    deleted: bool = False
    webhook_token: str | None = None
    kind: int | None = None  # Discord's message type when not 0/19 (a thread starter is 21)
    # Message components as Discord serves them; `component_history` has the set of every
    # version the bot wrote (aligned with `history`: creation first, then one per edit).
    components: list[dict[str, Any]] = field(default_factory=list)
    component_history: list[list[dict[str, Any]]] = field(default_factory=list)
    flags: int = 0  # Discord's message flags (64: ephemeral, 1 << 15: components v2)
    interaction_id: str | None = None  # the interaction this message answers (response or follow-up)

    @property
    def ephemeral(self) -> bool:
        """Only the interaction's user sees it; the channel's history does not list it."""
        return bool(self.flags & EPHEMERAL)

    def buttons(self) -> list[dict[str, Any]]:
        """The buttons on the message now, in display order."""
        return buttons(self.components)

    @property
    def custom_ids(self) -> list[str]:
        """The custom_ids of the buttons on the message now (link buttons have none)."""
        return [b["custom_id"] for b in self.buttons() if b.get("custom_id") is not None]

    def custom_ids_at(self, version: int) -> list[str]:
        """The buttons' custom_ids of one version (`component_history[version]`; -1: the last)."""
        return [b["custom_id"] for b in buttons(self.component_history[version]) if b.get("custom_id")]


@dataclass
class FakeInteraction:
    """An interaction the fake dispatched, and how the bot answered it."""

    id: str
    token: str
    type: int  # 2 command, 3 component, 4 autocomplete, 5 modal submit
    channel_id: str
    message_id: str | None = None  # the message a pressed component is on
    custom_id: str | None = None
    user_id: str | None = None
    created_at: float = field(default_factory=time.monotonic)
    response_type: int | None = None  # the callback type the bot answered with (None: not yet)
    original_id: str | None = None  # the message `@original` names once answered
    followup_ids: list[str] = field(default_factory=list)
    refused: list[int] = field(default_factory=list)  # Discord error codes of refused callbacks


@dataclass
class UserFile:
    """A file a member attaches; `size` is what Discord states (the data's length unless set)."""

    filename: str
    data: bytes
    content_type: str | None = None
    size: int | None = None
    served: bool = True  # False: its URL answers 404, as for a file deleted meanwhile
    # A voice message's recording: its length and its base64 waveform, as Discord states them.
    duration_secs: float | None = None
    waveform: str | None = None


@dataclass
class RequestRecord:
    method: str
    path: str
    body: Any
    status: int
    at: float
    query: dict[str, str] = field(default_factory=dict)
    user_agent: str | None = None  # the request's User-Agent header, as sent


@dataclass
class Bucket:
    """A fixed window: `limit` requests per `window` seconds."""

    name: str
    limit: int
    window: float
    used: int = 0
    reset_at: float = 0.0


@dataclass
class Fault:
    method: str
    pattern: re.Pattern[str]
    status: int
    body: dict[str, Any]
    times: int


class FakeDiscord(FakeThreads, FakeShards):
    """`async with FakeDiscord() as fake:`; the bot talks to `fake.api_url` / `fake.gateway_url`.

    `shards`, `max_concurrency` and `identify_interval`: see `fake_discord_shards`."""

    def __init__(self, *, message_limit: int = 5, message_window: float = 5.0,
                 global_limit: int | None = 50, heartbeat_interval: int = 41250, shards: int = 1,
                 max_concurrency: int = 1, identify_interval: float | None = None) -> None:
        self.message_limit = message_limit
        self.message_window = message_window
        self.global_limit = global_limit
        self.heartbeat_interval = heartbeat_interval
        self.bot_user = {"id": snowflake(), "username": "llmbot", "discriminator": "0",
                         "global_name": "LLM Bot", "avatar": None, "bot": True}
        self.owner = {"id": snowflake(), "username": "owner", "discriminator": "0",
                      "global_name": "Owner", "avatar": None, "bot": False}
        self.member_user = {"id": snowflake(), "username": "alice", "discriminator": "0",
                            "global_name": "Alice", "avatar": None, "bot": False}
        self.application_id = snowflake()
        self.bot_public = True  # Discord's default for a new application (the Public Bot switch)
        self.left_guilds: list[str] = []  # guilds the bot left (DELETE /users/@me/guilds/{id}), in order
        self.guild_id = snowflake()
        self.channel_id = snowflake()
        self.thought_channel_id = snowflake()
        self.dm_channel_id = snowflake()
        # Channel id -> Discord permission overwrites sent with the guild (set before the bot starts).
        self.channel_overwrites: dict[str, list[dict[str, Any]]] = {}
        # More text channels and members for load runs (`populate`), sent with the guild.
        self.crowd_channels: list[str] = []
        self.crowd_members: list[dict[str, Any]] = []
        self.messages: dict[str, StoredMessage] = {}
        self.requests: list[RequestRecord] = []
        self.rate_limited: list[RequestRecord] = []  # every 429, global ones included
        self.global_rate_limited: list[RequestRecord] = []  # the global limit's 429s only
        self.commands: dict[str, list[dict[str, Any]]] = {}
        self.interaction_responses: list[dict[str, Any]] = []  # accepted callbacks, in order
        # Every interaction dispatched, by id; callbacks for others answer 404 10062 unless
        # `accept_unknown_interactions` (then each is answered once more like a new one).
        self.interactions: dict[str, FakeInteraction] = {}
        self.accept_unknown_interactions = True
        # Seconds within which the first callback must come (Discord: 3); None: no deadline.
        self.callback_deadline: float | None = None
        # Requests counted against the global limit, and interaction requests (exempt).
        self.global_counted = 0
        self.interaction_requests = 0
        self.typing: list[tuple[str, float]] = []
        self.identified = asyncio.Event()
        # A close code to answer IDENTIFY with instead of READY (4014: a privileged intent
        # the application was not granted, such as Message Content).
        self.identify_close_code: int | None = None
        self._buckets: dict[tuple[str, str], Bucket] = {}
        self._global: Bucket | None = None
        self._faults: list[Fault] = []
        self._forbidden: set[str] = set()
        # Member attachments served at /attachments/<id>/<filename>; `downloads` lists the ids fetched.
        self.attachment_data: dict[str, bytes] = {}
        self.downloads: list[str] = []
        self._sockets: list[web.WebSocketResponse] = []
        self._init_threads()
        self._init_shards(shards, max_concurrency, identify_interval)
        self._seq = 0
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.port = 0

    # ---- lifecycle ------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_url(self) -> str:
        return f"{self.base_url}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gw"

    async def __aenter__(self) -> FakeDiscord:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/gw", self._gateway)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        app.router.add_get("/attachments/{id}/{filename}", self._attachment)
        self._runner, self.port = await serve_on_loopback(app)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for ws in list(self._sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    # ---- fault injection --------------------------------------------------------------
    def fail(self, method: str, path_regex: str, status: int, *, code: int = 0,
             message: str = "", times: int = 1) -> None:
        """Answer the next `times` requests matching METHOD and path (after /api/v10) with an error."""
        body = {"message": message or {403: "Missing Permissions", 404: "Unknown Message",
                                       503: "Service Unavailable"}.get(status, "error"),
                "code": code or {403: 50013, 404: 10008}.get(status, 0)}
        self._faults.append(Fault(method.upper(), re.compile(path_regex), status, body, times))

    def forbid_channel(self, channel_id: str | int) -> None:
        """Every message write in this channel answers 403 Missing Permissions."""
        self._forbidden.add(str(channel_id))

    async def delete_message(self, message_id: str | int) -> None:
        """As if a user deleted it: later edits answer 404 Unknown Message (10008)."""
        self.messages[str(message_id)].deleted = True
        await self._notify()

    # ---- reading the store ----------------------------------------------------------
    def bot_messages(self, channel_id: str | int | None = None, *,
                     ephemeral: bool | None = None) -> list[StoredMessage]:
        """Messages the bot wrote (including deleted and ephemeral ones), in creation order;
        `ephemeral=False` keeps the ones the channel shows, `True` the ephemeral ones."""
        cid = str(channel_id) if channel_id is not None else None
        return [m for m in self.messages.values()
                if m.author["id"] == self.bot_user["id"] and (cid is None or m.channel_id == cid)
                and (ephemeral is None or m.ephemeral == ephemeral)]

    def visible_messages(self, channel_id: str | int) -> list[StoredMessage]:
        """What everyone sees in the channel (and its history lists): any author, not deleted,
        not ephemeral; oldest first."""
        cid = str(channel_id)
        return [m for m in self.messages.values() if m.channel_id == cid and not m.deleted and not m.ephemeral]

    def interaction(self, key: str | int) -> FakeInteraction:
        """A dispatched interaction by its id or its token."""
        key = str(key)
        found = self.interactions.get(key) or next(
            (i for i in self.interactions.values() if i.token == key), None)
        if found is None:
            raise AssertionError(f"the fake dispatched no interaction {key!r}")
        return found

    def interaction_messages(self, key: str | int) -> list[StoredMessage]:
        """The messages an interaction's answer created (its response message, then its
        follow-ups), ephemeral ones included; `key` is its id or its token."""
        token = self.interaction(key).token
        return [m for m in self.messages.values() if m.webhook_token == token]

    def count(self, method: str, path_regex: str) -> int:
        pattern = re.compile(path_regex)
        return sum(1 for r in self.requests if r.method == method and pattern.search(r.path))

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0,
                       watch: asyncio.Task[Any] | None = None) -> None:
        """Wait until `predicate()` holds; fail loudly if `watch` (the bot task) ends first.

        Re-checked on every fake-Discord change and every 20 ms, so predicates on the
        bot's own state work too.
        """
        async def waiter() -> None:
            async with self._changed:
                while not predicate():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._changed.wait(), 0.02)

        task = asyncio.ensure_future(waiter())
        pending = {task} if watch is None else {task, watch}
        done, _ = await asyncio.wait(pending, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if task not in done:
            task.cancel()
            if watch is not None and watch in done:
                raise AssertionError(f"bot task ended while waiting: {watch.exception()!r}"
                                     if not watch.cancelled() else "bot task was cancelled")
            raise AssertionError("timed out waiting for the fake Discord state")

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    # ---- gateway ------------------------------------------------------------------------
    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(max_msg_size=0)
        await ws.prepare(request)
        self._sockets.append(ws)
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": self.heartbeat_interval},
                                      "s": None, "t": None}))
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                payload = json.loads(msg.data)
                op = payload.get("op")
                if op == 1:
                    await ws.send_str(json.dumps({"op": 11, "d": None, "s": None, "t": None}))
                elif op == 2 and self.identify_close_code is not None:
                    await ws.close(code=self.identify_close_code, message=b"Disallowed intent(s).")
                elif op == 2:
                    session = await self._identify(ws, payload["d"])
                    if session is None:
                        continue
                    guilds = self.guild_ids_on(session.shard_id, session.shard_count)
                    ready = self._ready(guilds, session.session_id)
                    ready["shard"] = [session.shard_id, session.shard_count]
                    await self._send(ws, "READY", ready)
                    for guild_id in guilds:
                        await self._send(ws, "GUILD_CREATE", self.payload_of_guild(guild_id))
                    self.identified.set()
                    await self._notify()
                elif op == 6:
                    self._resume(ws, payload["d"] or {})
                    await self._send(ws, "RESUMED", {})
        finally:
            self._sockets.remove(ws)
            self._closed(ws)
        return ws

    async def _send(self, ws: web.WebSocketResponse, event: str, data: dict[str, Any]) -> None:
        self._seq += 1
        await ws.send_str(json.dumps({"op": 0, "t": event, "s": self._seq, "d": data}))

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send a gateway dispatch to every session that should get it: the session of the
        guild's shard, or shard 0's for an event without a guild (an interaction is remembered)."""
        if event == "INTERACTION_CREATE":
            self._remember_interaction(data)
        for ws in self._targets(data):
            await self._send(ws, event, data)

    def _ready(self, guild_ids: list[str], session_id: str) -> dict[str, Any]:
        return {"v": 10, "user": self.bot_user, "guilds": [{"id": g, "unavailable": True} for g in guild_ids],
                "session_id": session_id, "resume_gateway_url": self.gateway_url,
                "application": {"id": self.application_id, "flags": 0}, "private_channels": []}

    def _channel(self, cid: str, name: str, position: int, guild_id: str | None = None) -> dict[str, Any]:
        return {"id": cid, "type": 0, "guild_id": guild_id or self.guild_id, "name": name, "position": position,
                "permission_overwrites": self.channel_overwrites.get(cid, []), "nsfw": False, "parent_id": None}

    def guild_payload(self) -> dict[str, Any]:
        joined = _now_iso()
        return {
            "id": self.guild_id, "name": "Fake Guild", "icon": None, "owner_id": self.owner["id"],
            "unavailable": False, "member_count": 3 + len(self.crowd_members), "large": False, "features": [],
            "preferred_locale": "en-US",
            "roles": [{"id": self.guild_id, "name": "@everyone", "permissions": "2248473465835073",
                       "position": 0, "color": 0, "hoist": False, "managed": False, "mentionable": False}],
            "channels": [self._channel(self.channel_id, "general", 0),
                         self._channel(self.thought_channel_id, "thought-log", 1),
                         *(self._channel(c, f"load-{i}", 2 + i) for i, c in enumerate(self.crowd_channels))],
            "members": [{"user": u, "roles": [], "joined_at": joined, "deaf": False, "mute": False, "flags": 0}
                        for u in (self.bot_user, self.owner, self.member_user, *self.crowd_members)],
            "threads": self.active_threads(), "emojis": [], "stickers": [], "voice_states": [], "presences": [],
            "stage_instances": [], "guild_scheduled_events": [], "soundboard_sounds": [],
            "joined_at": joined,
        }

    def populate(self, channels: int, members: int) -> None:
        """`channels` more text channels and `members` more members (before the bot starts):
        a crowd to load the bot with, e.g. 100 channels with 5 members asking in each."""
        self.crowd_channels = [snowflake() for _ in range(channels)]
        self.crowd_members = [{"id": snowflake(), "username": f"member{i}", "discriminator": "0",
                               "global_name": f"Member {i}", "avatar": None, "bot": False}
                              for i in range(members)]

    def _member(self, user: dict[str, Any], permissions: str | None = None) -> dict[str, Any]:
        member = {"roles": [], "joined_at": _now_iso(), "deaf": False, "mute": False, "flags": 0}
        if permissions is not None:
            member.update(user=user, permissions=permissions)
        return member

    async def send_user_message(self, content: str, *, author: dict[str, Any] | None = None,
                                channel_id: str | None = None, dm: bool = False,
                                mention_bot: bool = False, reply_to: str | None = None,
                                files: tuple[UserFile, ...] | list[UserFile] = (), flags: int = 0) -> StoredMessage:
        """A member posts a message (MESSAGE_CREATE), with `files` attached and Discord's message
        `flags` (1 << 13: a voice message); returns it as stored."""
        author = author or self.member_user
        cid = channel_id or (self.dm_channel_id if dm else self.channel_id)
        stored = StoredMessage(id=snowflake(), channel_id=cid, author=author, content=content,
                               history=[content], attachments=[self._user_attachment(f) for f in files], flags=flags)
        if reply_to is not None:
            stored.message_reference = {"message_id": reply_to, "channel_id": cid}
        self.messages[stored.id] = stored
        data = self.message_payload(stored)
        if reply_to is not None and reply_to in self.messages:
            data["referenced_message"] = self.message_payload(self.messages[reply_to])
        data["mentions"] = [self.bot_user] if mention_bot else []
        if not dm:
            data["guild_id"] = self.guild_of_channel(cid) or self.guild_id
            data["member"] = self._member(author)
        await self.dispatch("MESSAGE_CREATE", data)
        return stored

    def _user_attachment(self, file: UserFile) -> dict[str, Any]:
        """The attachment object Discord sends, its URL served by this fake."""
        aid = snowflake()
        if file.served:
            self.attachment_data[aid] = file.data
        url = f"{self.base_url}/attachments/{aid}/{file.filename}"
        attachment = {"id": aid, "filename": file.filename, "url": url, "proxy_url": url,
                      "size": len(file.data) if file.size is None else file.size}
        if file.content_type is not None:
            attachment["content_type"] = file.content_type
        if file.duration_secs is not None:
            attachment["duration_secs"] = file.duration_secs
        if file.waveform is not None:
            attachment["waveform"] = file.waveform
        return attachment

    async def _attachment(self, request: web.Request) -> web.Response:
        """An attachment's bytes, as Discord's CDN serves them (404 once unknown)."""
        aid = request.match_info["id"]
        self.downloads.append(aid)
        data = self.attachment_data.get(aid)
        if data is None:
            return web.Response(status=404, text="Not Found")
        return web.Response(body=data, content_type="application/octet-stream")

    async def send_interaction(self, *, name: str | None = None, options: list[dict[str, Any]] | None = None,
                               modal_custom_id: str | None = None, modal_values: dict[str, str] | None = None,
                               permissions: str = "0", locale: str = "en-US",
                               user: dict[str, Any] | None = None, channel_id: str | None = None,
                               resolved: dict[str, Any] | None = None) -> dict[str, Any]:
        """INTERACTION_CREATE: a slash command (type 2) or, with `modal_custom_id`, a modal submit
        (type 5), in `channel_id` (default: the main guild's general channel) and its guild;
        `resolved`: the objects a command's options name (channels, users), as Discord sends them."""
        user = user or self.member_user
        cid = channel_id or self.channel_id
        guild_id = self.guild_of_channel(cid) or self.guild_id
        if modal_custom_id is not None:
            rows = [{"type": 1, "components": [{"type": 4, "custom_id": k, "value": v}]}
                    for k, v in (modal_values or {}).items()]
            itype, data = 5, {"custom_id": modal_custom_id, "components": rows}
        else:
            command = next((c for cmds in self.commands.values() for c in cmds if c["name"] == name), None)
            itype = 2
            data = {"id": command["id"] if command else snowflake(), "name": name, "type": 1,
                    "options": options or []}
            if resolved is not None:
                data["resolved"] = resolved
        payload = {
            "id": snowflake(), "application_id": self.application_id, "type": itype,
            "token": f"itoken-{snowflake()}", "version": 1, "data": data,
            "attachment_size_limit": 10 * 1024 * 1024, "guild_id": guild_id,
            "channel_id": cid, "channel": self._channel_object(cid),
            "member": self._member(user, permissions), "locale": locale, "guild_locale": "en-US",
            "app_permissions": "2248473465835073", "entitlements": [],
            "authorizing_integration_owners": {"0": guild_id}, "context": 0,
        }
        await self.dispatch("INTERACTION_CREATE", payload)
        return payload

    def _remember_interaction(self, data: dict[str, Any]) -> None:
        message = data.get("message") or {}
        user = (data.get("member") or {}).get("user") or data.get("user") or {}
        iid = str(data["id"])
        self.interactions[iid] = FakeInteraction(
            id=iid, token=data["token"], type=data.get("type", 2),
            channel_id=str(data.get("channel_id") or self.channel_id),
            message_id=str(message["id"]) if "id" in message else None,
            custom_id=(data.get("data") or {}).get("custom_id"), user_id=user.get("id"))

    def _channel_object(self, cid: str) -> dict[str, Any]:
        """The channel object an interaction in `cid` carries (a thread's, a text channel's)."""
        if cid in self.threads:
            return self.threads[cid]
        if (other := self.guild_channel(cid)) is not None:
            return other
        named = {self.channel_id: ("general", 0), self.thought_channel_id: ("thought-log", 1),
                 **{c: (f"load-{i}", 2 + i) for i, c in enumerate(self.crowd_channels)}}
        name, position = named.get(cid, ("channel", 0))
        return self._channel(cid, name, position)

    async def press(self, message_id: str | int, custom_id: str, *, user: dict[str, Any] | None = None,
                    permissions: str = "0", locale: str = "en-US",
                    app_permissions: str = APP_PERMISSIONS) -> dict[str, Any]:
        """A member presses the button `custom_id` on a message: INTERACTION_CREATE type 3,
        with the message as Discord serves it now. Fails (AssertionError) when the message
        carries no enabled button with that custom_id now: Discord sends no such press.
        A DM message's press comes with `user` and a DM channel instead of a member."""
        stored = self.messages.get(str(message_id))
        if stored is None or stored.deleted:
            raise AssertionError(f"no message {message_id} to press a button on")
        button = next((b for b in stored.buttons() if b.get("custom_id") == custom_id), None)
        if button is None:
            raise AssertionError(f"message {message_id} has no button {custom_id!r} now "
                                 f"(its buttons: {stored.custom_ids})")
        if button.get("disabled"):
            raise AssertionError(f"the button {custom_id!r} on message {message_id} is disabled")
        user = user or self.member_user
        cid = stored.channel_id
        payload: dict[str, Any] = {
            "id": snowflake(), "application_id": self.application_id, "type": 3,
            "token": f"itoken-{snowflake()}", "version": 1,
            "data": {"custom_id": custom_id, "component_type": 2},
            "message": self.message_payload(stored), "attachment_size_limit": 10 * 1024 * 1024,
            "channel_id": cid, "locale": locale, "app_permissions": app_permissions, "entitlements": [],
        }
        if cid == self.dm_channel_id:
            payload.update(user=user, context=1, channel={"id": cid, "type": 1, "recipients": [user]},
                           authorizing_integration_owners={"1": user["id"]})
        else:
            guild_id = self.guild_of_channel(cid) or self.guild_id
            payload.update(guild_id=guild_id, guild_locale="en-US", context=0,
                           channel=self._channel_object(cid), member=self._member(user, permissions),
                           authorizing_integration_owners={"0": guild_id})
        await self.dispatch("INTERACTION_CREATE", payload)
        return payload

    # ---- REST ----------------------------------------------------------------------------
    def message_payload(self, m: StoredMessage) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": m.id, "channel_id": m.channel_id, "author": m.author, "content": m.content,
            "timestamp": _now_iso(), "edited_timestamp": _now_iso() if len(m.history) > 1 else None,
            "tts": False, "mention_everyone": False, "mentions": [], "mention_roles": [],
            "attachments": m.attachments, "embeds": m.embeds, "pinned": False,
            "type": m.kind if m.kind is not None else 19 if m.message_reference else 0, "flags": m.flags,
            "components": m.components,
        }
        if m.message_reference:
            data["message_reference"] = m.message_reference
        if m.webhook_token is not None:
            data["webhook_id"] = self.application_id
        return data

    def _bucket_for(self, method: str, path: str) -> Bucket:
        match = re.match(r"/channels/(\d+)/messages", path)
        if match and method in ("POST", "PATCH"):
            key = ("channel-messages", match.group(1))
            limit, window = self.message_limit, self.message_window
        elif match and method == "DELETE":
            key = ("channel-message-delete", match.group(1))
            limit, window = self.message_limit, 1.0
        else:
            # Like Discord, a route's bucket is per major parameter (the channel, guild or
            # webhook in the path): typing in one channel does not use up another's.
            major = re.match(r"/(?:channels|guilds|webhooks)/(\d+)", path)
            key = (f"{method} {re.sub(r'[0-9]{6,}', '{id}', path)}", major.group(1) if major else "")
            limit, window = 50, 1.0
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = Bucket(name=f"fake-{abs(hash(key[0])):x}", limit=limit, window=window)
        return bucket

    @staticmethod
    def _take(bucket: Bucket, now: float) -> bool:
        if now >= bucket.reset_at:
            bucket.used, bucket.reset_at = 0, now + bucket.window
        if bucket.used >= bucket.limit:
            return False
        bucket.used += 1
        return True

    @staticmethod
    def _headers(bucket: Bucket, now: float) -> dict[str, str]:
        reset_after = max(bucket.reset_at - now, 0.0)
        return {"X-RateLimit-Limit": str(bucket.limit),
                "X-RateLimit-Remaining": str(max(bucket.limit - bucket.used, 0)),
                "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}",
                "X-RateLimit-Reset-After": f"{reset_after:.3f}",
                "X-RateLimit-Bucket": bucket.name}

    async def _rest(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["tail"]
        method = request.method
        body, files = await self._read_body(request)
        now = time.monotonic()
        record = RequestRecord(method, path, body, 200, now, dict(request.query),
                               request.headers.get("User-Agent"))
        self.requests.append(record)
        try:
            return await self._answer(request, method, path, body, files, record, now)
        finally:
            await self._notify()

    async def _answer(self, request: web.Request, method: str, path: str, body: Any,
                      files: dict[str, tuple[str, bytes, str]], record: RequestRecord,
                      now: float) -> web.Response:
        exempt = bool(GLOBAL_EXEMPT.match(path))
        if exempt:
            self.interaction_requests += 1
        else:
            self.global_counted += 1
        if self.global_limit is not None and not exempt:
            if self._global is None or self._global.limit != self.global_limit:
                self._global = Bucket("global", self.global_limit, 1.0)
            if not self._take(self._global, now):
                return self._too_many_global(record, self._global, now)
        bucket = self._bucket_for(method, path)
        if not self._take(bucket, now):
            return self._too_many(record, bucket, now)
        headers = self._headers(bucket, now)

        def error(status: int, payload: dict[str, Any]) -> web.Response:
            record.status = status
            return json_response(payload, status, headers)

        for fault in self._faults:
            if fault.times > 0 and fault.method == method and fault.pattern.search(path):
                fault.times -= 1
                return error(fault.status, fault.body)
        match = re.match(r"/channels/(\d+)/", path)
        if match and match.group(1) in self._forbidden and method != "GET":
            return error(403, {"message": "Missing Permissions", "code": 50013})
        result = self._route(method, path, body, files, request)
        if result is None:
            return error(404, {"message": f"fake Discord has no route {method} {path}", "code": 0})
        status, payload = result
        record.status = status
        if status == 204:
            return web.Response(status=204, headers=headers)
        return json_response(payload, status, headers)

    def _too_many(self, record: RequestRecord, bucket: Bucket, now: float) -> web.Response:
        record.status = 429
        self.rate_limited.append(record)
        retry_after = max(bucket.reset_at - now, 0.001)
        headers = {**self._headers(bucket, now), "Via": "1.1 google", "Retry-After": str(int(retry_after) + 1),
                   "X-RateLimit-Scope": "user"}
        return json_response({"message": "You are being rate limited.", "retry_after": round(retry_after, 3),
                              "global": False}, 429, headers)

    def _too_many_global(self, record: RequestRecord, bucket: Bucket, now: float) -> web.Response:
        """Discord's global 429: no route bucket headers (none was used), `global: true`."""
        record.status = 429
        self.rate_limited.append(record)
        self.global_rate_limited.append(record)
        retry_after = max(bucket.reset_at - now, 0.001)
        headers = {"Via": "1.1 google", "Retry-After": str(int(retry_after) + 1),
                   "X-RateLimit-Global": "true", "X-RateLimit-Scope": "global"}
        return json_response({"message": "You are being rate limited.", "retry_after": round(retry_after, 3),
                              "global": True}, 429, headers)

    @staticmethod
    async def _read_body(request: web.Request) -> tuple[Any, dict[str, tuple[str, bytes, str]]]:
        files: dict[str, tuple[str, bytes, str]] = {}
        if request.content_type == "multipart/form-data":
            form = await request.post()
            body: Any = None
            for name, value in form.items():
                if name == "payload_json":
                    body = json.loads(value if isinstance(value, str) else value.file.read())
                elif isinstance(value, web.FileField):
                    files[name] = (value.filename, value.file.read(), value.content_type)
            return body, files
        raw = await request.read()
        return (json.loads(raw) if raw else None), files

    def _route(self, method: str, path: str, body: Any, files: dict[str, tuple[str, bytes, str]],
               request: web.Request) -> tuple[int, Any] | None:
        if method == "GET" and path == "/users/@me":
            return 200, self.bot_user
        if method == "GET" and path == "/oauth2/applications/@me":
            return 200, {"id": self.application_id, "name": "llmbot", "description": "", "icon": None,
                         "bot_public": self.bot_public, "bot_require_code_grant": False, "owner": self.owner,
                         "verify_key": "00", "flags": 0}
        if method == "DELETE" and (m := re.fullmatch(r"/users/@me/guilds/(\d+)", path)):
            return self._leave_guild(m.group(1))
        if method == "GET" and path in ("/gateway/bot", "/gateway"):
            return 200, self.gateway_bot_payload(self.gateway_url)
        if m := re.fullmatch(r"/applications/(\d+)(?:/guilds/(\d+))?/commands", path):
            if method == "PUT":
                scope = m.group(2) or "global"
                self.commands[scope] = [
                    {**c, "id": snowflake(), "application_id": self.application_id, "version": snowflake(),
                     "default_member_permissions": c.get("default_member_permissions")} for c in body]
                return 200, self.commands[scope]
            if method == "GET":
                return 200, self.commands.get(m.group(2) or "global", [])
        if (threaded := self._thread_route(method, path, body)) is not None:
            return threaded
        if m := re.fullmatch(r"/channels/(\d+)/typing", path):
            self.typing.append((m.group(1), time.monotonic()))
            return 204, None
        if m := re.fullmatch(r"/channels/(\d+)/messages", path):
            if method == "POST":
                body = body or {}
                if (invalid := self._invalid(body, body.get("flags") or 0)) is not None:
                    return invalid
                stored = self._create(m.group(1), body, files)
                return 200, self.message_payload(stored)
            if method == "GET":
                msgs = self.visible_messages(m.group(1))
                if before := int(request.query.get("before", 0)):  # a history page older than a message
                    msgs = [x for x in msgs if int(x.id) < before]
                return 200, [self.message_payload(x) for x in reversed(msgs)][: int(request.query.get("limit", 50))]
        if m := re.fullmatch(r"/channels/(\d+)/messages/(\d+)", path):
            stored = self.messages.get(m.group(2))
            if stored is not None and stored.ephemeral:  # only its interaction's webhook reaches it
                return 404, {"message": "Unknown Message", "code": 10008}
            return self._existing(method, m.group(2), body or {}, files)
        if m := re.fullmatch(r"/interactions/(\d+)/([^/]+)/callback", path):
            return self._callback(m.group(1), m.group(2), body or {}, files)
        if m := re.fullmatch(r"/webhooks/(\d+)/([^/]+)(?:/messages/(@original|\d+))?", path):
            return self._webhook(method, m.group(2), m.group(3), body or {}, files)
        return None

    def _invalid(self, body: dict[str, Any], flags: int, *prefix: str) -> tuple[int, Any] | None:
        """Discord's 400 for components that break its rules (None: valid or absent)."""
        if "components" not in body or body["components"] is None:
            return None
        errors = component_errors(body["components"], flags)
        return (400, invalid_form_body(nest(errors, *prefix))) if errors else None

    def _webhook(self, method: str, token: str, target: str | None, body: dict[str, Any],
                 files: dict[str, tuple[str, bytes, str]]) -> tuple[int, Any] | None:
        """An interaction's webhook: follow-ups (POST), `@original` and follow-up edits."""
        inter = next((i for i in self.interactions.values() if i.token == token), None)
        unknown_webhook = 404, {"message": "Unknown Webhook", "code": 10015}
        if inter is None:  # a token the fake never dispatched: answered as before interactions were known
            if target is None and method == "POST":
                if (invalid := self._invalid(body, body.get("flags") or 0)) is not None:
                    return invalid
                stored = self._create(self.channel_id, body, files, webhook_token=token, may_hide=True)
                return 200, self.message_payload(stored)
            if target == "@original":
                target = next((x.id for x in self.messages.values() if x.webhook_token == token), None)
                if target is None:
                    return unknown_webhook
            return None if target is None else self._existing(method, target, body, files)
        if target is None:
            if method != "POST":
                return None
            if inter.response_type is None:  # no follow-up before the interaction is answered
                return unknown_webhook
            if (invalid := self._invalid(body, body.get("flags") or 0)) is not None:
                return invalid
            stored = self._create(inter.channel_id, body, files, webhook_token=token, may_hide=True,
                                  interaction_id=inter.id)
            inter.followup_ids.append(stored.id)
            return 200, self.message_payload(stored)
        if target == "@original":
            target = inter.original_id
            if target is None:
                return unknown_webhook
        elif target != inter.original_id and target not in inter.followup_ids:
            return 404, {"message": "Unknown Message", "code": 10008}
        return self._existing(method, target, body, files)

    def _create(self, channel_id: str, body: dict[str, Any], files: dict[str, tuple[str, bytes, str]],
                *, webhook_token: str | None = None, may_hide: bool = False,
                interaction_id: str | None = None) -> StoredMessage:
        """A new bot message; `may_hide`: an interaction's message, ephemeral with flag 64."""
        flags = body.get("flags") or 0
        stored = StoredMessage(id=snowflake(), channel_id=channel_id, author=self.bot_user,
                               content=body.get("content") or "", webhook_token=webhook_token,
                               flags=flags & (_SETTABLE_FLAGS | (EPHEMERAL if may_hide else 0)),
                               interaction_id=interaction_id)
        stored.history.append(stored.content)
        ref = body.get("message_reference")
        if ref:  # discord.py sends ints; Discord answers with string snowflakes
            stored.message_reference = {k: str(v) if k.endswith("_id") and v is not None else v
                                        for k, v in ref.items()}
        self._apply(stored, body, files)
        stored.component_history.append(stored.components)
        self.messages[stored.id] = stored
        return stored

    def _apply(self, stored: StoredMessage, body: dict[str, Any], files: dict[str, tuple[str, bytes, str]]) -> None:
        if "embeds" in body:
            stored.embeds = body["embeds"] or []
        if "allowed_mentions" in body:
            stored.allowed_mentions = body["allowed_mentions"]
        if "components" in body:  # present: replaced ([] removes them); absent: kept
            stored.components = body["components"] or []
        if files:
            stored.attachments = []
            for filename, data, ctype in files.values():
                aid = snowflake()
                self.attachment_data[aid] = data  # served like a member's file
                url = f"{self.base_url}/attachments/{aid}/{filename}"
                stored.files[filename] = data
                stored.attachments.append({"id": aid, "filename": filename, "size": len(data),
                                           "url": url, "proxy_url": url, "content_type": ctype})

    def _existing(self, method: str, mid: str, body: dict[str, Any],
                  files: dict[str, tuple[str, bytes, str]]) -> tuple[int, Any]:
        stored = self.messages.get(mid)
        if stored is None or stored.deleted:
            return 404, {"message": "Unknown Message", "code": 10008}
        if method == "GET":
            return 200, self.message_payload(stored)
        if method == "DELETE":
            stored.deleted = True
            return 204, None
        if (invalid := self._invalid(body, stored.flags | (body.get("flags") or 0))) is not None:
            return invalid
        self._edit(stored, body, files)
        return 200, self.message_payload(stored)

    def _edit(self, stored: StoredMessage, body: dict[str, Any], files: dict[str, tuple[str, bytes, str]]) -> None:
        if "content" in body:
            stored.content = body["content"] or ""
        if "flags" in body:  # an edit sets the suppress bits; ephemeral and components v2 stay
            stored.flags = (stored.flags & ~SUPPRESS_EMBEDS) | ((body["flags"] or 0) & _SETTABLE_FLAGS)
        stored.history.append(stored.content)
        stored.edit_times.append(time.monotonic())
        self._apply(stored, body, files)
        stored.component_history.append(stored.components)

    def _callback(self, iid: str, token: str, body: dict[str, Any],
                  files: dict[str, tuple[str, bytes, str]]) -> tuple[int, Any]:
        """An interaction's response, answered once as Discord does."""
        inter = self.interactions.get(iid)
        if inter is None or inter.token != token:
            if not self.accept_unknown_interactions:
                return 404, {"message": "Unknown interaction", "code": 10062}
            inter = FakeInteraction(iid, token, 2, self.channel_id)  # not kept: each call is a new one
        deadline = self.callback_deadline
        if inter.type == AUTOCOMPLETE:
            deadline = min(deadline or AUTOCOMPLETE_DEADLINE, AUTOCOMPLETE_DEADLINE)
        late = deadline is not None and time.monotonic() - inter.created_at > deadline
        if inter.response_type is not None or late:
            code = 40060 if inter.response_type is not None else 10062
            inter.refused.append(code)
            if code == 10062:
                return 404, {"message": "Unknown interaction", "code": 10062}
            return 400, {"message": "Interaction has already been acknowledged.", "code": 40060}
        rtype = body.get("type")
        data = body.get("data") or {}
        if ((rtype in (6, 7) and inter.message_id is None)  # only a component's message can be updated
                or (rtype == AUTOCOMPLETE_RESULT) != (inter.type == AUTOCOMPLETE)):
            return 400, invalid_form_body({"type": {"_errors": [{
                "code": "INTERACTION_CALLBACK_TYPE_INVALID",
                "message": "Interaction callback type is not valid for this interaction"}]}})
        if rtype == AUTOCOMPLETE_RESULT and (errors := choice_errors(data.get("choices"))):
            return 400, invalid_form_body(nest(errors, "data"))
        target = self.messages.get(inter.message_id) if rtype == 7 and inter.message_id else None
        if rtype == 7 and (target is None or target.deleted):
            return 404, {"message": "Unknown Message", "code": 10008}
        if rtype in (4, 7):
            flags = (data.get("flags") or 0) | (target.flags if target is not None else 0)
            if (invalid := self._invalid(data, flags, "data")) is not None:
                return invalid
        inter.response_type = rtype
        self.interaction_responses.append({"interaction_id": iid, "token": token, **body})
        callback: dict[str, Any] = {"id": iid, "type": inter.type, "response_message_loading": rtype == 5,
                                    "response_message_ephemeral": bool((data.get("flags") or 0) & EPHEMERAL)}
        message: dict[str, Any] | None = None
        if rtype in (4, 5):
            stored = self._create(inter.channel_id, data, files, webhook_token=token, may_hide=True,
                                  interaction_id=iid)
            inter.original_id = stored.id
            message = self.message_payload(stored)
        elif rtype in (6, 7):
            inter.original_id = inter.message_id
            if target is not None:
                self._edit(target, data, files)
                message = self.message_payload(target)
        if inter.original_id is not None:
            callback["response_message_id"] = inter.original_id
        if rtype in (4, 5, 6, 7):
            resource: dict[str, Any] = {"type": rtype}
            if message is not None:
                resource["message"] = message
            return 200, {"interaction": callback, "resource": resource}
        return 200, {"interaction": callback}
