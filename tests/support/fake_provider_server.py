"""A local replay server for the official LLM SDKs.

It answers the routes the SDKs call (`POST …/chat/completions`, `POST …/responses`,
`POST /v1/messages`, `POST /{version}/models/{model}:streamGenerateContent`) with
recorded bytes: corpus files (with their sidecar's status and content type), error
bodies, or bytes a test writes itself. It can cut a stream after N bytes or N events
(abrupt close), delay between events, write in random-sized pieces, choose the response
per API key or by what a request asks (`chooser`), and trickle an OpenAI-style answer as
real providers stream one (`Trickle`).

`rules` make it enforce what a provider documents, as the real API would: each rule may
refuse a request with the provider's own error body before any scripted reply is
served (`ProviderRules.refusal`), and may reshape the reply it serves
(`ProviderRules.shaped`, e.g. thinking blocks streamed empty unless the request asked
to see them). A request a rule refused is recorded like any other.

`GET` requests (a provider's model list) are answered by `listing`, a `ModelListing`
that serves pages in one provider's documented shape (`fake_model_lists`); they are
recorded on `requests` like the others.
"""

from __future__ import annotations

import asyncio
import json
import random
import string
import time
import zlib
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from aiohttp import web

from tests.support.env_loopback import serve_on_loopback


def split_events(body: bytes) -> list[bytes]:
    """Split an SSE body into events, each keeping its blank-line terminator."""
    events: list[bytes] = []
    start = 0
    i = 0
    n = len(body)
    while i < n:
        if body.startswith(b"\r\n\r\n", i):
            events.append(body[start : i + 4])
            i += 4
            start = i
        elif body.startswith(b"\n\n", i):
            events.append(body[start : i + 2])
            i += 2
            start = i
        else:
            i += 1
    if start < n:
        events.append(body[start:])
    return events


@dataclass(frozen=True)
class Trickle:
    """An answer streamed slowly, as a real provider streams one: `rate` chunks per second
    of `min_chars` to `max_chars` characters for `seconds`, each chunk its own SSE event in
    its own network write, on a fixed schedule (no drift from the server's own delays).

    The text is a function of a seed (`pieces`): the server seeds it with the question
    (`seed_of`), so every question gets its own text and a reader can check it exactly.
    """

    rate: float = 30.0
    seconds: float = 10.0
    min_chars: int = 3
    max_chars: int = 6
    # The wire format: OpenAI chat completions ("chat", every OpenAI-compatible provider),
    # or the Responses API ("responses", OpenAI itself).
    form: str = "chat"

    def pieces(self, seed: int) -> list[str]:
        """The chunks' texts: word-like pieces, the first without its leading space."""
        rng = random.Random(seed)
        count = max(1, round(self.rate * self.seconds))
        out = []
        for i in range(count):
            size = rng.randint(self.min_chars, self.max_chars)
            word = "".join(rng.choices(string.ascii_lowercase, k=size - (i > 0)))
            out.append(word if i == 0 else " " + word)
        return out

    def events(self, pieces: list[str]) -> list[bytes]:
        """The SSE events of `pieces` in the trickle's form, then the end and usage."""
        if self.form == "responses":
            return self.responses_events(pieces)
        return self.chat_events(pieces)

    @staticmethod
    def responses_events(pieces: list[str]) -> list[bytes]:
        """Responses API events: a message item's text deltas, then `response.completed`."""
        def named(kind: str, **fields: Any) -> bytes:
            return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n".encode()

        item = {"id": "msg_trickle", "type": "message", "role": "assistant", "content": []}
        usage = {"input_tokens": 10, "output_tokens": len(pieces), "total_tokens": 10 + len(pieces)}
        return ([named("response.created", response={"id": "resp_trickle", "status": "in_progress"}),
                 named("response.output_item.added", output_index=0, item={**item, "status": "in_progress"})]
                + [named("response.output_text.delta", item_id="msg_trickle", output_index=0,
                         content_index=0, delta=p) for p in pieces]
                + [named("response.output_item.done", output_index=0, item={**item, "status": "completed"}),
                   named("response.completed", response={"id": "resp_trickle", "status": "completed",
                                                         "usage": usage})])

    @staticmethod
    def chat_events(pieces: list[str]) -> list[bytes]:
        """The OpenAI chat-completion SSE events of `pieces`, the finish, usage and [DONE]."""
        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            data = {"id": "trickle", "object": "chat.completion.chunk", "created": 0, "model": "trickle",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            return f"data: {json.dumps(data)}\n\n".encode()

        usage = {"id": "trickle", "object": "chat.completion.chunk", "created": 0, "model": "trickle",
                 "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": len(pieces),
                                          "total_tokens": 10 + len(pieces)}}
        return ([chunk({"role": "assistant", "content": p}) for p in pieces]
                + [chunk({}, "stop"), f"data: {json.dumps(usage)}\n\n".encode(), b"data: [DONE]\n\n"])


def seed_of(payload: Any) -> int:
    """A request's seed for a trickled text: its last message (or Responses input item),
    so each question differs."""
    messages = (payload.get("messages") or payload.get("input")) if isinstance(payload, dict) else None
    last = messages[-1] if messages else None
    return zlib.crc32(json.dumps(last, sort_keys=True).encode())


@dataclass
class Reply:
    """One scripted HTTP response."""

    status: int = 200
    body: bytes = b""
    content_type: str = "text/event-stream"
    headers: dict[str, str] = field(default_factory=dict)
    cut_after_bytes: int | None = None
    cut_after_events: int | None = None
    event_delay: float = 0.0
    first_byte_delay: float = 0.0
    random_pieces: int | None = None  # seed: write the body in random-sized pieces
    max_piece: int = 64
    trickle: Trickle | None = None  # stream a seeded answer slowly (the body is not used)

    @classmethod
    def sse(cls, events: list[Any], *, done: bool = True, **options: Any) -> Reply:
        """An OpenAI-style stream from JSON-able payloads (or raw strings)."""
        lines = [e if isinstance(e, str) else json.dumps(e) for e in events]
        body = "".join(f"data: {line}\n\n" for line in lines)
        if done:
            body += "data: [DONE]\n\n"
        return cls(body=body.encode(), **options)

    @classmethod
    def named_sse(cls, events: list[tuple[str, Any]], **options: Any) -> Reply:
        """An Anthropic-style stream of (event name, payload) pairs."""
        body = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
        return cls(body=body.encode(), **options)

    @classmethod
    def error(cls, status: int, body: Any, **options: Any) -> Reply:
        raw = body if isinstance(body, (bytes, str)) else json.dumps(body)
        raw = raw.encode() if isinstance(raw, str) else raw
        return cls(status=status, body=raw, content_type="application/json", **options)

    @classmethod
    def from_corpus(cls, corpus: Path, name: str, **options: Any) -> Reply:
        """`name` like 'openai/chat_text_2024' or 'errors/openai_429_insufficient_quota'."""
        sidecar = json.loads((corpus / f"{name}.json").read_text())
        headers = {k.lower(): v for k, v in (sidecar.get("headers") or {}).items()}
        content_type = headers.pop("content-type", None)
        headers.pop("content-length", None)
        if name.startswith("errors/"):
            text = sidecar.get("body_text")
            body = text.encode() if text is not None else json.dumps(sidecar["body"]).encode()
            return cls(
                status=sidecar["status"], body=body,
                content_type=content_type or "application/json", headers=headers, **options,
            )
        body = (corpus / f"{name}.sse").read_bytes()
        return cls(
            status=sidecar.get("status", 200), body=body,
            content_type=content_type or "text/event-stream", headers=headers, **options,
        )

    def with_options(self, **options: Any) -> Reply:
        return replace(self, **options)


class ProviderRules(Protocol):
    """What one provider documents about the requests it takes (see the module docstring)."""

    def refusal(self, path: str, body: Any) -> Reply | None:
        """The provider's error reply for a request it refuses; None when it takes it."""

    def shaped(self, path: str, body: Any, reply: Reply) -> Reply:
        """The reply as the provider would stream it for this request."""


class ModelListing(Protocol):
    """A provider's model list as its `GET` route serves it (see `fake_model_lists`)."""

    def page(self, path: str, query: Mapping[str, str]) -> Reply:
        """The reply to `GET path?query`: a page of the list, or the provider's error."""


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    json: Any
    api_key: str | None
    text: str | None = None  # the trickled answer's text, when the reply was a trickle
    ended: float | None = None  # time.monotonic() when the trickle's last byte was written


def _api_key(request: web.Request) -> str | None:
    auth = request.headers.get("Authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return request.headers.get("x-api-key") or request.headers.get("x-goog-api-key") or request.query.get("key")


class ProviderReplayServer:
    """`async with ProviderReplayServer() as server:` then point an SDK at `server.url`."""

    def __init__(self, rules: Sequence[ProviderRules] = ()) -> None:
        self.rules = list(rules)
        self.default: Reply | None = None
        self.by_key: dict[str, Reply] = {}
        self.queue: deque[Reply] = deque()
        # Picks the reply by what a request asks (its path and JSON body) before the queue
        # and the per-key replies, for requests sent at once in no known order; None falls
        # through to them.
        self.chooser: Callable[[str, Any], Reply | None] | None = None
        self.requests: list[RecordedRequest] = []
        self.listing: ModelListing | None = None  # what GET requests are answered with
        self._runner: web.AppRunner | None = None
        self.port: int = 0

    # ---- scripting ----------------------------------------------------------------
    def reply(self, reply: Reply, *, key: str | None = None) -> None:
        """Serve `reply` to every request (or only to requests made with API key `key`)."""
        if key is None:
            self.default = reply
        else:
            self.by_key[key] = reply

    def enqueue(self, *replies: Reply) -> None:
        """Serve these once each, in order, before falling back to the per-key/default reply."""
        self.queue.extend(replies)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ---- lifecycle ----------------------------------------------------------------
    async def __aenter__(self) -> ProviderReplayServer:
        app = web.Application()
        app.router.add_route("POST", "/{tail:.*}", self._handle)
        app.router.add_route("GET", "/{tail:.*}", self._list)
        self._runner, self.port = await serve_on_loopback(app)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    # ---- serving ------------------------------------------------------------------
    def _choose(self, key: str | None, path: str, payload: Any) -> Reply | None:
        chosen = self.chooser(path, payload) if self.chooser is not None else None
        if chosen is not None:
            return chosen
        if self.queue:
            return self.queue.popleft()
        if key is not None and key in self.by_key:
            return self.by_key[key]
        return self.default

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            payload = None
        key = _api_key(request)
        record = RecordedRequest(request.method, request.path, dict(request.query),
                                 dict(request.headers), payload, key)
        self.requests.append(record)
        refused = next((r for rule in self.rules if (r := rule.refusal(request.path, payload)) is not None), None)
        reply = refused or self._choose(key, request.path, payload)
        if reply is None:
            return web.Response(status=500, text="replay server: no reply scripted")
        if refused is None:
            for rule in self.rules:
                reply = rule.shaped(request.path, payload, reply)
        return await self._serve(request, reply, record)

    async def _list(self, request: web.Request) -> web.StreamResponse:
        """A model list's page (`listing`); a server without one has no such route."""
        record = RecordedRequest(request.method, request.path, dict(request.query), dict(request.headers),
                                 None, _api_key(request))
        self.requests.append(record)
        if self.listing is None:
            return web.Response(status=404, text="replay server: no model list scripted")
        reply = self.listing.page(request.path, request.query)
        if reply.cut_after_bytes is not None or reply.random_pieces is not None or reply.event_delay:
            return await self._serve(request, reply, record)
        if reply.first_byte_delay:
            await asyncio.sleep(reply.first_byte_delay)
        # One write: a list is one JSON document, not events (splitting megabytes into
        # events byte by byte would take the fake longer than the client's patience).
        return web.Response(status=reply.status, body=reply.body,
                            headers={"Content-Type": reply.content_type, **reply.headers})

    async def _serve(self, request: web.Request, reply: Reply, record: RecordedRequest) -> web.StreamResponse:
        if reply.first_byte_delay:
            await asyncio.sleep(reply.first_byte_delay)
        if reply.status != 200 and reply.cut_after_bytes is None and reply.cut_after_events is None:
            return web.Response(status=reply.status, body=reply.body,
                                headers={"Content-Type": reply.content_type, **reply.headers})
        response = web.StreamResponse(status=reply.status,
                                      headers={"Content-Type": reply.content_type, **reply.headers})
        await response.prepare(request)
        try:
            if reply.trickle is not None:
                await self._trickle(response, reply.trickle, record)
                return response
            await self._write_body(request, response, reply)
        except (ConnectionError, asyncio.CancelledError):
            # The SDK closed the connection (it raised on an error event): nothing to do.
            return response
        return response

    @staticmethod
    async def _trickle(response: web.StreamResponse, trickle: Trickle, record: RecordedRequest) -> None:
        """Write the seeded answer one event per write, event i at start + i / rate."""
        pieces = trickle.pieces(seed_of(record.json))
        record.text = "".join(pieces)
        loop = asyncio.get_running_loop()
        start = loop.time()
        for i, event in enumerate(trickle.events(pieces)):
            delay = start + i / trickle.rate - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            await response.write(event)
        await response.write_eof()
        record.ended = time.monotonic()

    async def _write_body(self, request: web.Request, response: web.StreamResponse, reply: Reply) -> None:
        events = split_events(reply.body)
        cut = False
        if reply.cut_after_events is not None:
            cut = reply.cut_after_events < len(events)
            events = events[: reply.cut_after_events]
        body = b"".join(events)
        if reply.cut_after_bytes is not None and reply.cut_after_bytes < len(body):
            cut = True
            body = body[: reply.cut_after_bytes]
            events = split_events(body)
        rng = random.Random(reply.random_pieces) if reply.random_pieces is not None else None
        for event in events:
            if reply.event_delay:
                await asyncio.sleep(reply.event_delay)
            if rng is None:
                await response.write(event)
                continue
            pos = 0
            while pos < len(event):
                size = rng.randint(1, reply.max_piece)
                await response.write(event[pos : pos + size])
                pos += size
                await asyncio.sleep(0)
        if cut:
            # Abrupt close: no terminating chunk, so the client sees a broken body.
            transport = request.transport
            if transport is not None:
                transport.close()
            return
        await response.write_eof()
