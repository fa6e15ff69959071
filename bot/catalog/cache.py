"""The model lists the bot has read, kept up to an hour per route.

Discord drops an autocomplete answer after 3 s, so no list is fetched on its path:
`ModelCatalog.models` answers with what is kept now, and a missing or stale list starts
one fetch in the background (one at a time per route) whose result a later keystroke
sees. A route is its provider, its address and a fingerprint of its key (`ListKey`),
never the key itself.

A list that cannot be had offers nothing, and is not asked for again for a minute (a
member typing would otherwise send one request per keystroke to a failing endpoint). It
is logged once per outage: when a route's fetches start failing, and not again until
one succeeds. The log line names the provider, the host and the failure's kind only.

OpenRouter's list also says what each model takes; `listed_parameters` answers that for
a turn from the newest list read at the model's address, without ever fetching.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from providers.identity import Provider
from providers.log_safe import loggable
from providers.model_list import ListedModel, ModelListFailed

log = logging.getLogger(__name__)

MAX_AGE = 3600.0  # seconds a list is kept before it is asked for again
RETRY_AFTER_FAILURE = 60.0  # seconds a failed route is left alone
MAX_ROUTES = 512  # lists kept at most (least recently used go first)

Fetch = Callable[[], Awaitable[tuple[ListedModel, ...]]]
Address = tuple[Provider, str | None]  # a provider and its address (None: its own)


@dataclass(frozen=True, slots=True)
class ListKey:
    """Whose list: the provider, its address (None: the provider's own) and a fingerprint
    of the key that asked (lists may differ per key: a plan, an organization)."""

    provider: Provider
    base_url: str | None
    key_print: str


@dataclass(frozen=True, slots=True)
class _Kept:
    models: tuple[ListedModel, ...]
    at: float
    failed: bool = False


class ModelCatalog:
    """The lists read, by route (see the module docstring); `clock` is monotonic seconds."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._kept: OrderedDict[ListKey, _Kept] = OrderedDict()
        self._fetching: dict[ListKey, asyncio.Task[None]] = {}
        self._failing: set[ListKey] = set()
        self._parameters: OrderedDict[Address, dict[str, frozenset[str]]] = OrderedDict()

    def models(self, key: ListKey, fetch: Fetch) -> tuple[ListedModel, ...]:
        """The models kept for `key` now (none yet: empty); a missing or stale list starts
        `fetch` in the background, unless one is running for `key` already."""
        kept = self._kept.get(key)
        if kept is None or self._clock() - kept.at >= (RETRY_AFTER_FAILURE if kept.failed else MAX_AGE):
            self._refresh(key, fetch)
        if kept is None or kept.failed:
            return ()
        self._kept.move_to_end(key)
        return kept.models

    def kept(self, key: ListKey) -> tuple[ListedModel, ...] | None:
        """The list kept for `key`, stale or not; None when none was read or the last
        fetch failed (nothing is known then)."""
        kept = self._kept.get(key)
        return None if kept is None or kept.failed else kept.models

    def listed_parameters(self, provider: Provider, base_url: str | None, model: str) -> frozenset[str] | None:
        """What the newest list read at the address says `model` takes; None when no list
        said (never fetches: a turn does not wait for a list)."""
        listed = self._parameters.get((provider, base_url))
        return None if listed is None else listed.get(model.strip())

    def _refresh(self, key: ListKey, fetch: Fetch) -> None:
        if key in self._fetching:
            return
        task = asyncio.get_running_loop().create_task(self._fetch(key, fetch))
        self._fetching[key] = task
        task.add_done_callback(lambda _: self._fetching.pop(key, None))

    async def _fetch(self, key: ListKey, fetch: Fetch) -> None:
        try:
            models = await fetch()
        except Exception as exc:  # noqa: BLE001 - a list is a convenience: any failure offers nothing
            self._keep(key, _Kept((), self._clock(), failed=True))
            if key not in self._failing:
                self._failing.add(key)
                log.warning("the model list of %s at %s cannot be read (%s); no model names are offered "
                            "for it until it can", key.provider, _host(key.base_url), _reason(exc))
            return
        self._failing.discard(key)
        self._keep(key, _Kept(models, self._clock()))
        said = {model.id: model.parameters for model in models if model.parameters is not None}
        if said:
            self._parameters[(key.provider, key.base_url)] = said
            self._parameters.move_to_end((key.provider, key.base_url))
            while len(self._parameters) > MAX_ROUTES:
                self._parameters.popitem(last=False)

    def _keep(self, key: ListKey, kept: _Kept) -> None:
        self._kept[key] = kept
        self._kept.move_to_end(key)
        while len(self._kept) > MAX_ROUTES:
            self._kept.popitem(last=False)

    async def aclose(self) -> None:
        """Stop the fetches still running (the bot is closing)."""
        tasks = list(self._fetching.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


def _host(base_url: str | None) -> str:
    """Where the list was asked for, as a log line may show it: the host alone."""
    if base_url is None:
        return "its own address"
    return loggable(urlsplit(base_url).hostname or "an unreadable address")


def _reason(exc: BaseException) -> str:
    """Why, without the provider's words (an SDK's message may quote part of the key)."""
    if isinstance(exc, ModelListFailed):
        error = exc.error
        status = f", HTTP {error.status}" if error.status is not None else ""
        return f"{error.kind}{status}"
    return type(exc).__name__
