"""An in-memory MessageSink for the stream tests, on a virtual clock.

The sink is a fake of OUR `MessageSink` protocol (not of discord.py): it keeps message
contents, logs every operation with its virtual time, models Discord's per-channel
bucket (a fixed window opened by the first request, `limit` requests per window) and
counts every request that Discord would have answered with a 429. Faults are injected
per operation kind.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass

from stream.sink import (
    FINAL,
    EmbedSpec,
    Ending,
    MessageGone,
    RateLimitInfo,
    SentMessage,
    Write,
)
from tests.support.fake_clock import VirtualClock


@dataclass(slots=True, frozen=True)
class Op:
    time: float
    kind: str  # send, edit, delete, embed, file
    message_id: int
    content: str | None = None
    reply: bool = False
    write: Write | None = None  # what the caller said it writes (sends and edits)

    @property
    def closing(self) -> bool:
        """A closing write: the final state of the answer's last message."""
        return self.write is not None and self.write.stage == "closing"

    @property
    def ending(self) -> Ending | None:
        """The answer's ending the write carried."""
        return self.write.ending if self.write is not None else None


class MemorySink:
    """An in-memory channel implementing `MessageSink`, on a virtual clock."""

    def __init__(
        self,
        clock: VirtualClock,
        *,
        limit: int = 5,
        window: float = 5.0,
        report_headers: bool = True,
        latency: float = 0.0,
        channel_id: int = 1,
    ) -> None:
        self.clock = clock
        self.limit = limit
        self.window = window
        self.report_headers = report_headers
        self.latency = latency
        self.channel_id = channel_id
        self.contents: dict[int, str] = {}  # live messages in posting order
        self.embeds: dict[int, EmbedSpec] = {}
        self.ops: list[Op] = []
        self.violations = 0  # requests Discord would have answered with 429
        self.invalid: list[str] = []  # protocol misuse (too long, empty content)
        self._next_id = 100
        self._window_start: float | None = None
        self._count = 0
        self._faults: dict[str, deque[Exception]] = defaultdict(deque)
        # Seconds the next requests wait before they reach Discord (the bot's global budget
        # holding them): the bucket counts a request when it arrives, not when it was asked.
        self.holds: deque[float] = deque()

    # -- test controls -------------------------------------------------------------

    def fail(self, kind: str, exc: Exception, times: int = 1) -> None:
        """The next `times` operations of `kind` raise `exc`."""
        self._faults[kind].extend([exc] * times)

    def delete_by_user(self, message_id: int) -> None:
        """Someone deleted the message in Discord."""
        self.contents.pop(message_id, None)

    def texts(self) -> list[str]:
        return [c for i, c in self.contents.items() if i not in self.embeds]

    def edits_per_window(self, width: float = 5.0) -> int:
        """The most operations seen in any sliding window of `width` seconds."""
        times = [op.time for op in self.ops if op.kind in ("send", "edit", "embed")]
        best = 0
        for i, start in enumerate(times):
            best = max(best, sum(1 for t in times[i:] if t < start + width))
        return best

    # -- MessageSink ---------------------------------------------------------------

    async def _request(self, kind: str) -> float:
        """Count the request against the bucket; returns the time it arrived."""
        if self.holds:
            await self.clock.sleep(self.holds.popleft())
        now = self.clock.now()
        if kind != "delete":
            if self._window_start is None or now >= self._window_start + self.window:
                self._window_start, self._count = now, 0
            self._count += 1
            if self._count > self.limit:
                self.violations += 1
        if self.latency:
            await self.clock.sleep(self.latency)
        if self._faults[kind]:
            raise self._faults[kind].popleft()
        return now

    def _check(self, content: str) -> None:
        if len(content) > 2000:
            self.invalid.append(f"too long: {len(content)}")
        if not content.strip():
            self.invalid.append("empty content")

    async def send(self, content: str, *, reply: bool = False, write: Write = FINAL) -> SentMessage:
        self._check(content)
        issued = await self._request("send")
        self._next_id += 1
        self.contents[self._next_id] = content
        self.ops.append(Op(issued, "send", self._next_id, content, reply, write))
        return SentMessage(self._next_id, self.channel_id)

    async def edit(self, message: SentMessage, content: str, *, write: Write = FINAL) -> None:
        self._check(content)
        try:
            issued = await self._request("edit")
        except MessageGone:
            self.contents.pop(message.id, None)  # a 404 means the message is gone for good
            raise
        if message.id not in self.contents:
            raise MessageGone(f"message {message.id} was deleted")
        self.contents[message.id] = content
        self.ops.append(Op(issued, "edit", message.id, content, False, write))

    async def delete(self, message: SentMessage) -> None:
        issued = await self._request("delete")
        if message.id not in self.contents:
            raise MessageGone(f"message {message.id} was deleted")
        del self.contents[message.id]
        self.ops.append(Op(issued, "delete", message.id))

    async def send_embed(self, embed: EmbedSpec, *, reply: bool = False) -> SentMessage:
        issued = await self._request("embed")
        self._next_id += 1
        self.contents[self._next_id] = ""
        self.embeds[self._next_id] = embed
        self.ops.append(Op(issued, "embed", self._next_id, embed.title, reply))
        return SentMessage(self._next_id, self.channel_id)

    async def send_file(self, filename: str, data: bytes, *, embed: EmbedSpec | None = None) -> SentMessage:
        issued = await self._request("file")
        self._next_id += 1
        self.ops.append(Op(issued, "file", self._next_id, filename))
        return SentMessage(self._next_id, self.channel_id)

    async def typing(self) -> None:
        return None

    def rate_limit(self) -> RateLimitInfo | None:
        if not self.report_headers:
            return None
        now = self.clock.now()
        if self._window_start is None or now >= self._window_start + self.window:
            return RateLimitInfo(self.limit, self.limit, self.window)
        remaining = max(0, self.limit - self._count)
        return RateLimitInfo(self.limit, remaining, self._window_start + self.window - now)
