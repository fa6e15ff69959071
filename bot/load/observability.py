"""Metrics and health on METRICS_PORT: `/metrics` for Prometheus, `/healthz` for the orchestrator.

A small aiohttp app on the bot's own event loop serves both, so `/healthz` reports what
the loop itself sees: ready (200) when the Discord gateway is connected (every shard of
this process) and the database answers a trivial query, else 503 with what is missing.
A stalled loop answers neither, which is what a health check should notice.

Besides the server this module keeps the loop's own gauges: the event-loop lag (a
background task measures how late a short sleep wakes), the answers in flight, and
discord.py's REST requests through an aiohttp trace (by kind of request and status,
429s by the limit's scope; the route's ids never become labels).

The same trace applies the global budget (`bot/edge/budget.py`): aiohttp awaits
`on_request_start` callbacks in the caller's task before anything is sent
(`ClientSession._request`), and discord.py sends every REST call of the bot through the
one session it builds with this trace (`HTTPClient.static_login`), so each request waits
there for its slot, with the priority its caller set, and an interim edit the budget
refuses raises `BudgetBusy` out of discord.py before it leaves. Its end (the answer's
headers, or a failure) settles the request with the budget, which behind a shared REST
proxy reads the proxy's queue from the answer times (`ProxyBudget`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Mapping
from typing import Any, Protocol

import aiohttp
import discord.http
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.edge.answered import response_arrived
from bot.edge.budget import BudgetBusy, GlobalBudget, counts_against_global, current_priority
from bot.load.answers import RunningAnswers
from bot.load.metrics import (
    ANSWERS_IN_FLIGHT,
    DISCORD_BUDGET_PRIORITIES,
    DISCORD_BUDGET_WAIT,
    DISCORD_INTERIM_SKIPPED,
    DISCORD_RATE_LIMITS,
    DISCORD_REQUEST_KINDS,
    DISCORD_REQUESTS,
    EVENT_LOOP_LAG,
    RATE_LIMIT_SCOPES,
    closed_label,
    status_label,
)


class Observed(Protocol):
    """What the server reads of the bot (`bot.app.LLMBot`), named here so this module
    needs no import of the application that starts it."""

    engine: AsyncEngine
    answers: RunningAnswers
    shards: Mapping[int, Any]
    shard_ids: list[int] | None
    shard_count: int | None

    def is_closed(self) -> bool: ...

    def is_ready(self) -> bool: ...

log = logging.getLogger(__name__)

DATABASE_CHECK_TIMEOUT = 3.0  # seconds a health check waits for `SELECT 1`
LAG_INTERVAL = 0.25  # seconds between the loop-lag monitor's sleeps


# ---- readiness -------------------------------------------------------------------------------
def gateway_connected(bot: Observed) -> bool:
    """Logged in, ready, and every shard this process runs connected: each of its shard ids
    has a session, and none of their websockets is closed (a shard reconnecting is not)."""
    if bot.is_closed() or not bot.is_ready():
        return False
    expected = set(bot.shard_ids or range(bot.shard_count or 1))
    shards = bot.shards
    return expected <= set(shards) and all(not shard.is_closed() for shard in shards.values())


async def database_answers(bot: Observed) -> bool:
    """`SELECT 1` on a pooled connection within DATABASE_CHECK_TIMEOUT."""
    try:
        async with asyncio.timeout(DATABASE_CHECK_TIMEOUT), bot.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
        return True
    except Exception as exc:  # noqa: BLE001 - any failure means "not ready"
        log.warning("health check: the database does not answer (%s)", type(exc).__name__)
        return False


async def readiness(bot: Observed) -> dict[str, bool]:
    gateway = gateway_connected(bot)
    database = await database_answers(bot)
    return {"ready": gateway and database, "gateway": gateway, "database": database}


# ---- Discord REST requests -------------------------------------------------------------------
_ROUTES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("POST", re.compile(r"/channels/\d+/messages$"), "send"),
    ("PATCH", re.compile(r"/channels/\d+/messages/\d+$"), "edit"),
    ("DELETE", re.compile(r"/channels/\d+/messages/\d+$"), "delete"),
    ("POST", re.compile(r"/channels/\d+/typing$"), "typing"),
    ("*", re.compile(r"/(interactions|webhooks)/"), "interaction"),
)


def request_kind(method: str, path: str) -> str:
    """What a Discord REST request did, from a closed vocabulary (ids never become labels)."""
    for route_method, pattern, kind in _ROUTES:
        if route_method in ("*", method) and pattern.search(path):
            return kind
    return closed_label(None, DISCORD_REQUEST_KINDS)


def discord_user_agent() -> str:
    """The User-Agent discord.py's own requests carry (`DiscordBot (url, version)`, which
    Discord asks of every request), read from a fresh, unconnected `HTTPClient`."""
    return discord.http.HTTPClient(asyncio.get_running_loop()).user_agent


def discord_http_trace(budget: GlobalBudget | None = None) -> aiohttp.TraceConfig:
    """The trace of discord.py's HTTP session (its `http_trace=`): each request waits for
    `budget` before it leaves (none: no global budget here) and is counted when it ends.

    A request without a User-Agent gets the bot's: discord.py's webhook adapter (interaction
    responses, follow-ups, edits of the original response) sends none on this session, so
    aiohttp's default went out. The start signal is given the headers the request is then
    built from, before aiohttp adds its default."""
    user_agent: list[str] = []  # the bot's, read once

    async def on_request_start(_session: Any, context: Any, params: aiohttp.TraceRequestStartParams) -> None:
        if "User-Agent" not in params.headers:
            if not user_agent:
                user_agent.append(discord_user_agent())
            params.headers["User-Agent"] = user_agent[0]
        if budget is None or not counts_against_global(str(params.url), discord.http.Route.BASE):
            return
        priority = current_priority()
        try:
            context.departure = departure = await budget.acquire(priority)
        except BudgetBusy:
            DISCORD_INTERIM_SKIPPED.inc()
            raise
        if priority.name.lower() in DISCORD_BUDGET_PRIORITIES:
            DISCORD_BUDGET_WAIT.labels(priority.name.lower()).observe(departure.waited)

    def settle(context: Any, *, answered: bool) -> None:
        """The request is back: its slot counts from now (`GlobalBudget.settle`); only an
        answered one tells a proxy's queue by its answer time (`ProxyBudget`)."""
        departure = getattr(context, "departure", None)
        if budget is not None and departure is not None:
            context.departure = None
            budget.settle(departure, answered=answered)

    async def on_request_exception(_session: Any, context: Any, _params: Any) -> None:
        settle(context, answered=False)

    async def on_request_end(_session: Any, context: Any, params: aiohttp.TraceRequestEndParams) -> None:
        settle(context, answered=True)
        kind = request_kind(params.method, params.url.path)
        status = params.response.status
        response_arrived(status)
        DISCORD_REQUESTS.labels(kind, status_label(status)).inc()
        if status == 429:
            scope = params.response.headers.get("X-RateLimit-Scope")
            DISCORD_RATE_LIMITS.labels(kind, closed_label(scope, RATE_LIMIT_SCOPES)).inc()

    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(on_request_start)
    trace.on_request_end.append(on_request_end)
    trace.on_request_exception.append(on_request_exception)
    return trace


# ---- the loop's own measurements -------------------------------------------------------------
async def measure_loop_lag(interval: float = LAG_INTERVAL) -> None:
    """Forever: sleep `interval` and record how much later than asked the loop woke us."""
    loop = asyncio.get_running_loop()
    while True:
        asked = loop.time()
        await asyncio.sleep(interval)
        EVENT_LOOP_LAG.observe(max(0.0, loop.time() - asked - interval))


# ---- the server ------------------------------------------------------------------------------
class Observability:
    """The `/metrics` + `/healthz` server and the loop-lag task of one bot, started and
    stopped with it (LLMBot.setup_hook / LLMBot.close)."""

    def __init__(self, bot: Observed, port: int, host: str | None = None) -> None:
        self._bot = bot
        # METRICS_HOST (127.0.0.1 unless the operator opens it) when not given.
        settings = getattr(bot, "settings", None)
        self._host = host if host is not None else getattr(settings, "METRICS_HOST", "127.0.0.1")
        self._port = port
        self._runner: web.AppRunner | None = None
        self._lag: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        """The bound port (the asked one, or the one the system chose for 0)."""
        site_sockets = self._runner.addresses if self._runner is not None else []
        return site_sockets[0][1] if site_sockets else self._port

    async def _metrics(self, _request: web.Request) -> web.Response:
        return web.Response(body=generate_latest(), headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def _healthz(self, _request: web.Request) -> web.Response:
        state = await readiness(self._bot)
        return web.json_response(state, status=200 if state["ready"] else 503)

    async def start(self) -> None:
        answers = self._bot.answers
        ANSWERS_IN_FLIGHT.set_function(lambda: len(answers))
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/healthz", self._healthz)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, self._host, self._port).start()
        self._lag = asyncio.get_running_loop().create_task(measure_loop_lag(), name="loop-lag")
        log.info("metrics and health on port %d (/metrics, /healthz)", self.port)

    async def stop(self) -> None:
        if self._lag is not None:
            self._lag.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._lag
            self._lag = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
