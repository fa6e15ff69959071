"""`MessageSink` over discord.py: where the stream layer's text becomes Discord messages.

Every send and edit carries `AllowedMentions.none()`, so whatever the model writes
(`@everyone`, `@here`, `<@&role>`, `<@user>`) pings nobody; the reply to the triggering
message does not ping its author either. discord.py errors become the stream layer's
`SinkError`s, which is all the buffer needs to decide between "continue in a new
message", "give up here" and "keep the text for later".

An answer's sink also owns its "typing…" indicator: from creation until its first
message, and again after a retraction (a retry replaces a failed answer) until the
retry's first message. Discord shows the indicator for about ten seconds, so it is
renewed until then.

Every call carries its priority to the global budget (`bot/edge/budget.py`), which
the HTTP trace applies to the request: an answer's sends, final edits and deletes are
urgent, an edit whose `Write` may be skipped may be refused (`SinkBusy`: skipped, not
failed), and a sink that is not an answer's (refusals, the thought log) and "typing…"
are routine. An edit returns once Discord has answered it, not after discord.py's hold
on the bucket it emptied (`bot/edge/answered.py`): a turn's last edit ends the turn.

An edit goes through discord.py's HTTP client (`HTTPClient.edit_message`, the request
`PartialMessage.edit` makes: its buckets, 429 retries and errors) but does not turn
Discord's answer into a `discord.Message`: nothing reads it, and building one (with its
components) cost about a tenth of the edit's CPU (docs/benchmarks.md, issue 34). A send
likewise (`HTTPClient.send_message`, the request `Messageable.send` makes): only the new
message's id is read, while a `Message` built from a reply's answer also builds the
message it replies to (Discord returns it whole), its author and its components.

With `controls` (`bot/capabilities/answer_controls/buttons.py`) the answer's buttons ride on the sends and
edits the delivery makes anyway, never on a request of their own, as each call's
`Write` says: interim text (still streaming) carries Stop; the closing write of the last
message carries the final buttons of the answer's `Ending` (a closing write without one,
a note after the end, leaves the buttons as they are); any other final text (a split
head) carries none, so Stop stays only on the newest part.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import secrets
from collections.abc import Iterator
from typing import Any

import aiohttp
import discord
from discord.http import handle_message_parameters
from discord.utils import MISSING

from bot.capabilities.answer_controls.buttons import AnswerControls
from bot.edge.answered import until_answered
from bot.edge.budget import BudgetBusy, Priority, request_priority
from bot.edge.embeds import embed_from_spec
from bot.load.metrics import FIRST_MESSAGE_SECONDS
from stream.sink import (
    FINAL,
    EmbedSpec,
    MessageGone,
    RateLimitInfo,
    SentMessage,
    SinkBusy,
    SinkError,
    SinkForbidden,
    SinkUnavailable,
    Write,
)

NO_MENTIONS = discord.AllowedMentions.none()
TYPING_REFRESH = 8.0  # seconds; Discord shows the indicator for about 10
# discord.py's route keys for the two message-writing routes of a channel.
_EDIT_ROUTE = "PATCH /channels/{channel_id}/messages/{message_id}"
_SEND_ROUTE = "POST /channels/{channel_id}/messages"
_UNCHANGED: dict[str, Any] = {}  # no `view` argument: Discord keeps the message's buttons
_UNKNOWN = object()  # a message this sink has not set buttons on (an old part being reused)


@contextlib.contextmanager
def sink_errors(*, editing: bool) -> Iterator[None]:
    """Translate discord.py failures; `editing` says a 404 means the message is gone."""
    try:
        yield
    except BudgetBusy as exc:
        raise SinkBusy(str(exc), retry_after=exc.retry_after) from exc
    except discord.NotFound as exc:
        if editing:
            raise MessageGone(f"message gone (Discord {exc.status}, code {exc.code})") from exc
        raise SinkForbidden(f"channel unavailable (Discord {exc.status}, code {exc.code})") from exc
    except discord.Forbidden as exc:
        raise SinkForbidden(f"not allowed (Discord {exc.status}, code {exc.code})") from exc
    except discord.DiscordServerError as exc:
        raise SinkUnavailable(f"Discord server error {exc.status}") from exc
    except discord.HTTPException as exc:
        if exc.status >= 500 or exc.status == 429:
            raise SinkUnavailable(f"Discord answered {exc.status}") from exc
        raise SinkError(f"Discord rejected the request ({exc.status}, code {exc.code})") from exc
    except (TimeoutError, aiohttp.ClientError, OSError) as exc:
        raise SinkUnavailable(f"network error talking to Discord: {type(exc).__name__}") from exc


class DiscordMessageSink:
    """One channel's delivery surface, replying to `reply_to` when asked.

    With `typing=True` (an answer's sink) it shows "typing…" as the module docstring
    says; `close()` ends the indicator when the answer is over.
    """

    def __init__(self, channel: discord.abc.Messageable, *, reply_to: discord.Message | None = None,
                 client: discord.Client | None = None, typing: bool = False,
                 controls: AnswerControls | None = None) -> None:
        self.channel = channel
        self.reply_to = reply_to
        self.client = client
        self.controls = controls
        self._views: dict[int, Any] = {}  # message id -> the buttons it shows (the answer's few messages)
        self._shows_typing = typing
        self._priority = Priority.URGENT if typing else Priority.ROUTINE
        self._first_timed = not typing  # an answer's sink times its first message once
        self._typing_task: asyncio.Task[None] | None = None
        if typing:
            self._start_typing()

    def _start_typing(self) -> None:
        if self._typing_task is None or self._typing_task.done():
            self._typing_task = asyncio.get_running_loop().create_task(self._keep_typing())

    def _stop_typing(self) -> None:
        if self._typing_task is not None:
            self._typing_task.cancel()
            self._typing_task = None

    async def _keep_typing(self) -> None:
        while True:
            try:
                await self.typing()
            except SinkError:
                return
            await asyncio.sleep(TYPING_REFRESH)

    def close(self) -> None:
        """The answer is over: no more "typing…"."""
        self._shows_typing = False
        self._stop_typing()

    def _reference(self, reply: bool) -> discord.MessageReference | None:
        if not reply or self.reply_to is None:
            return None
        # A deleted trigger must not make the answer fail: post it unreferenced instead.
        return self.reply_to.to_reference(fail_if_not_exists=False)

    def _partial(self, message: SentMessage) -> discord.PartialMessage:
        return self.channel.get_partial_message(message.id)  # type: ignore[attr-defined]

    async def _post(self, reply: bool, **kwargs: Any) -> SentMessage:
        with request_priority(self._priority), sink_errors(editing=False):
            sent = await self._send(self._reference(reply), kwargs)
        self._stop_typing()  # something is on screen now
        if not self._first_timed:
            self._first_timed = True
            self._time_first_message()
        return sent

    async def _send(self, reference: discord.MessageReference | None, fields: dict[str, Any]) -> SentMessage:
        """The request `Messageable.send` makes (a nonce Discord enforces, no pings), without
        building a `Message` from the answer (see the module docstring). Our views are never
        in discord.py's view store (`SentView.is_dispatchable`), so there is none to store."""
        channel = await self.channel._get_channel()  # type: ignore[attr-defined]
        state = channel._state
        fields = {"content": None, "view": None, **fields}  # as `send` passes them: no text, no buttons
        with handle_message_parameters(nonce=secrets.randbits(64), allowed_mentions=NO_MENTIONS,
                                       previous_allowed_mentions=state.allowed_mentions, mention_author=False,
                                       message_reference=(reference.to_message_reference_dict()
                                                          if reference is not None else MISSING),
                                       **fields) as params:
            data = await state.http.send_message(channel.id, params=params)
        return SentMessage(id=int(data["id"]), channel_id=channel.id)

    def _time_first_message(self) -> None:
        """Seconds from the question (its Discord timestamp) to the answer's first message."""
        if self.reply_to is not None:
            waited = (discord.utils.utcnow() - self.reply_to.created_at).total_seconds()
            FIRST_MESSAGE_SECONDS.observe(max(0.0, waited))

    def _buttons(self, write: Write) -> dict[str, Any]:
        """The `view` argument of a text send or edit (see the module docstring)."""
        controls = self.controls
        if controls is None:
            return _UNCHANGED
        if write.stage == "interim":
            return {"view": controls.stop}
        if write.stage == "closing":
            return _UNCHANGED if write.ending is None else {"view": controls.final(write.ending)}
        return {"view": None}

    async def send(self, content: str, *, reply: bool = False, write: Write = FINAL) -> SentMessage:
        buttons = self._buttons(write)
        sent = await self._post(reply, content=content, **buttons)
        if buttons:
            self._views[sent.id] = buttons["view"]
        return sent

    async def edit(self, message: SentMessage, content: str, *, write: Write = FINAL) -> None:
        priority = Priority.INTERIM if write.may_skip else self._priority
        buttons = self._buttons(write)
        if buttons and self._views.get(message.id, _UNKNOWN) is buttons["view"]:
            buttons = _UNCHANGED  # the message shows these buttons already: an interim edit carries text only
        with request_priority(priority), sink_errors(editing=True):
            # Back once Discord took it, not after discord.py's hold on an emptied bucket.
            await until_answered(self._patch(message, content, buttons))
        if buttons:
            self._views[message.id] = buttons["view"]
        self._stop_typing()  # an answer regenerated into its old messages shows text by editing them

    async def _patch(self, message: SentMessage, content: str, buttons: dict[str, Any]) -> None:
        """The request `PartialMessage.edit` makes, without building a `Message` from the
        answer (see the module docstring). Our views are never in discord.py's view store
        (`SentView.is_dispatchable`), so there is none to store or forget here."""
        state = self.channel._state  # type: ignore[attr-defined]
        with handle_message_parameters(content=content, allowed_mentions=NO_MENTIONS,
                                       previous_allowed_mentions=state.allowed_mentions, **buttons) as params:
            await state.http.edit_message(self.channel.id, message.id, params=params)  # type: ignore[attr-defined]

    async def delete(self, message: SentMessage) -> None:
        """Remove a superseded message; an answer's sink shows "typing…" again until the retry speaks."""
        try:
            with request_priority(self._priority), sink_errors(editing=True):
                await self._partial(message).delete()
        except MessageGone:
            pass  # already gone is what we wanted
        if self._shows_typing:
            self._start_typing()

    async def send_embed(self, embed: EmbedSpec, *, reply: bool = False) -> SentMessage:
        return await self._post(reply, embed=embed_from_spec(embed))

    async def send_file(self, filename: str, data: bytes, *, embed: EmbedSpec | None = None) -> SentMessage:
        kwargs: dict[str, Any] = {"file": discord.File(io.BytesIO(data), filename=filename)}
        if embed is not None:
            kwargs["embed"] = embed_from_spec(embed)
        return await self._post(False, **kwargs)

    async def typing(self) -> None:
        with request_priority(Priority.ROUTINE), sink_errors(editing=False):
            await self.channel.typing()

    def rate_limit(self) -> RateLimitInfo | None:
        """The bucket discord.py keeps for this channel's message writes (read-only), if known."""
        client = self.client
        channel_id = getattr(self.channel, "id", None)
        if client is None or channel_id is None:
            return None
        http = client.http
        hashes: dict[str, str] = getattr(http, "_bucket_hashes", {})
        buckets: dict[str, Any] = getattr(http, "_buckets", {})
        for route in (_EDIT_ROUTE, _SEND_ROUTE):
            bucket_hash = hashes.get(route)
            bucket = buckets.get(f"{bucket_hash}:{channel_id}") if bucket_hash else None
            if bucket is None or not getattr(bucket, "dirty", False):
                continue
            expires = bucket.expires
            now = asyncio.get_running_loop().time()
            if expires is None or expires <= now:
                return RateLimitInfo(limit=bucket.limit, remaining=bucket.limit - bucket.outgoing,
                                     reset_after=0.0)
            return RateLimitInfo(limit=bucket.limit, remaining=bucket.remaining,
                                 reset_after=expires - now)
        return None
