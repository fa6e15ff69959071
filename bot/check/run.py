"""Running the checks of one route: every check at once, each within its own time.

Every request goes the way a turn's does: an adapter from `open_adapter` (the bot's
`ProviderAccess`: a custom endpoint's address is checked at every connection, as for an
answer), the stream through `normalized_stream`, a tool call answered through the tool
loop's own functions. What each response streamed is gathered into a `Heard` (bounded:
an endpoint that streams without end is cut) and judged by its check
(`bot.check.probes`). Nothing here raises for a provider's failure: it is the check's ✗.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from bot.capabilities.web_search.answer import search_reach
from bot.capabilities.web_search.service.service import SearchService, search_service
from bot.check.probes import (
    CHECK_TOOLS,
    CheckName,
    Heard,
    Planned,
    Probe,
    called_check_tool,
    plan,
)
from bot.repo import KeyLease, ModelTarget
from bot.settings import Settings
from bot.tools.loop import execute_calls, history_for
from bot.tools.registry import ToolContext
from bot.turn.access import ProviderAccess
from bot.turn.attempts import open_adapter, target_label
from bot.turn.credentials import CredentialSource
from bot.usage.tokens import add_usage, counts_for
from providers import ChatRequest, StreamAdapter, normalized_stream
from providers.errors import classify_failure, internal_failure
from providers.log_safe import loggable
from providers.types import FunctionCall, ProviderError, Source, ThoughtLogEntry, Usage

log = logging.getLogger(__name__)

HEARD_CHARS = 4000  # of text and of reasoning: more is never needed to judge, and is not read
HEARD_CALLS = 8
SEARCH_QUERY = "today's date"
CheckState = Literal["passed", "failed", "skipped"]


@dataclass(frozen=True)
class CheckRoute:
    """What a check asks: the model, the key a turn would try first (`lease`), whose key
    it is, the model chain after it (for the tips) and whether the route may search."""

    target: ModelTarget
    lease: KeyLease
    credential_source: CredentialSource
    verbatim_tool_calling: bool = False
    fallback_chain: tuple[str, ...] = ()
    web_search: bool = False


@dataclass(frozen=True)
class CheckResult:
    """One row: passed, failed (with the provider's error, or the catalog key of what the
    answer missed and the answer itself, `said`) or skipped (`note`: why)."""

    name: CheckName
    label: str
    state: CheckState
    note: str | None = None
    error: ProviderError | None = None
    said: str = ""
    seconds: float | None = None
    usage: Usage | None = None  # what its requests cost (estimated where not reported)


@dataclass(frozen=True)
class CheckReport:
    """Every row of one route's check, in table order."""

    route: CheckRoute
    results: Sequence[CheckResult]

    @property
    def passed(self) -> bool:
        return all(result.state != "failed" for result in self.results)

    @property
    def usage(self) -> Usage | None:
        """The whole check's cost, as one answer's usage (None: nothing was counted)."""
        total: Usage | None = None
        for result in self.results:
            total = add_usage(total, result.usage)
        return total


async def run_checks(route: CheckRoute, access: ProviderAccess,
                     search: SearchService | None = None) -> CheckReport | None:
    """Every check of `route` at once; None when the model cannot be used at all (an
    adapter cannot be made for it: logged, as a turn logs it)."""
    adapter = open_adapter(route.target, route.lease, route.verbatim_tool_calling, access)
    if adapter is None:
        return None
    caps = adapter.capabilities
    await _close(adapter)
    rows = plan(caps, search_reach(route.web_search, caps, search is not None))
    results = await asyncio.gather(*(_row(row, route, access, search) for row in rows))
    report = CheckReport(route, results)
    log.info("route check of %s (%s key %s): %s", loggable(target_label(route.target)), route.credential_source,
             route.lease.masked, ", ".join(f"{r.name} {r.state}" for r in results))
    return report


async def _row(row: Planned, route: CheckRoute, access: ProviderAccess,
               search: SearchService | None) -> CheckResult:
    if row.probe is not None:
        return await run_probe(row.probe, route, access)
    if row.service and search is not None:
        return await _service_search(row, search)
    return CheckResult(row.name, row.label, "skipped", note=row.skipped)


@dataclass
class _Tally:
    """One check's responses so far: the last one heard and what all of them cost."""

    heard: Heard = field(default_factory=Heard)
    usage: Usage | None = None
    missing: str | None = None  # what the first response of a tool round lacked

    def add(self, request: ChatRequest, heard: Heard) -> Heard:
        self.heard = heard
        if heard.usage is not None or heard.text.strip():  # a failure before any output costs nothing
            self.usage = add_usage(self.usage, counts_for(heard.usage, request, heard.text))
        return heard


async def run_probe(probe: Probe, route: CheckRoute, access: ProviderAccess) -> CheckResult:
    """Send the probe (and its tool round) within its time; judge the last response."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    tally = _Tally()
    try:
        async with asyncio.timeout(probe.timeout):
            await _exchange(probe, route, access, tally)
    except TimeoutError:
        tally.heard = Heard(error=classify_failure(provider=route.target.provider.value, code="check_deadline",
                                                   message=f"no answer within {probe.timeout:g} seconds",
                                                   timeout=True))
    except Exception:  # noqa: BLE001 - a bug of the check is its ✗, never the others' end
        log.exception("the %s check failed unexpectedly", probe.name)
        tally.heard = Heard(error=internal_failure(provider=route.target.provider.value, code="check_internal",
                                                   message="the check failed unexpectedly"))
    return _judged(probe, tally, loop.time() - started)


async def _exchange(probe: Probe, route: CheckRoute, access: ProviderAccess, tally: _Tally) -> None:
    adapter = open_adapter(route.target, route.lease, route.verbatim_tool_calling, access)
    if adapter is None:  # it could be made a moment ago: only a bug gets here
        raise RuntimeError("no adapter for a route that had one")
    try:
        request = probe.ask()
        heard = tally.add(request, await hear(adapter, request))
        if heard.error is not None or not probe.tool_round:
            return
        tally.missing = called_check_tool(heard)
        if tally.missing is None:
            request = await answered(request, heard)
            tally.add(request, await hear(adapter, request))
    finally:
        await _close(adapter)


def _judged(probe: Probe, tally: _Tally, seconds: float) -> CheckResult:
    heard = tally.heard
    if heard.error is not None:
        return CheckResult(probe.name, probe.label, "failed", error=heard.error, seconds=seconds, usage=tally.usage)
    missing = tally.missing or probe.judge(heard)
    state: CheckState = "passed" if missing is None else "failed"
    return CheckResult(probe.name, probe.label, state, note=missing, said=heard.text if missing else "",
                       seconds=seconds, usage=tally.usage)


async def answered(request: ChatRequest, heard: Heard) -> ChatRequest:
    """The request after the model's calls ran: its turn and the tool results appended,
    the tools still declared, as `bot.tools.loop.ToolLoop` sends the next round."""
    results = await execute_calls(heard.calls, CHECK_TOOLS, ToolContext())
    return dataclasses.replace(request, messages=[*request.messages, *history_for(heard.text, results)])


async def hear(adapter: StreamAdapter, request: ChatRequest) -> Heard:
    """One response, read until it ends, fails or says more than a check needs."""
    text: list[str] = []
    thoughts: list[ThoughtLogEntry] = []
    calls: list[FunctionCall] = []
    sources: list[Source] = []
    searches: list[str] = []
    usage: Usage | None = None
    error: ProviderError | None = None
    size = thought_size = 0
    async with contextlib.aclosing(normalized_stream(adapter, request)) as chunks:
        async for chunk in chunks:
            if chunk.type == "text" and chunk.content:
                text.append(chunk.content)
                size += len(chunk.content)
            elif chunk.type == "function_call" and chunk.function_call is not None and len(calls) < HEARD_CALLS:
                calls.append(chunk.function_call)
            elif chunk.type == "error":
                error = chunk.error
            for thought in chunk.thoughts or ():
                if thought_size < HEARD_CHARS:
                    thoughts.append(thought)
                    thought_size += len(thought.text)
            usage = chunk.usage or usage
            sources += chunk.sources or ()
            searches += chunk.searches or ()
            if size > HEARD_CHARS:
                break
    return Heard("".join(text)[:HEARD_CHARS], tuple(thoughts), tuple(calls), tuple(sources), tuple(searches),
                 usage, error)


async def _service_search(row: Planned, search: SearchService) -> CheckResult:
    """The bot's own search service, asked once (the model's side is the tool check's)."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    outcome = await search.search(SEARCH_QUERY)  # bounded by the service's own timeout; never raises
    seconds = loop.time() - started
    if outcome.failed:
        note = "commands.check.note.service_failed"
    else:
        note = None if outcome.results else "commands.check.note.service_empty"
    return CheckResult(row.name, row.label, "failed" if note else "passed", note=note, seconds=seconds,
                       usage=Usage(searches=1))


async def _close(adapter: StreamAdapter) -> None:
    """The adapter drops its SDK client; a shared HTTP client stays the pool's."""
    closer = getattr(adapter, "aclose", None)
    if closer is not None:
        with contextlib.suppress(Exception):
            await closer()


async def check_route(route: CheckRoute, access: ProviderAccess, settings: Settings) -> CheckReport | None:
    """`run_checks` with the operator's search service (SEARCH_BACKEND) when the route
    may search, opened for this check and closed after it."""
    search = search_service(settings) if route.web_search else None
    try:
        return await run_checks(route, access, search)
    finally:
        if search is not None:
            await search.close()
