"""The order in which one turn tries its route: legs x models x keys, narrowed as failures
come in.

A leg is whose keys pay (the member's own, then the server's when allowed); each leg has
a chain of models; each model a pool of usable keys. After a failure the planner
(`bot.turn.policy.plan_next`) says whether the next key, the next model or nothing comes
next; `AttemptPlan` turns that into the iteration the turn walks, so the turn itself
reads "for each attempt: stream it, decide".
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

from bot.errors.presentation import answered_at
from bot.load.config_cache import ConfigSnapshot
from bot.repo import KeyLease, ModelTarget
from bot.turn.access import ProviderAccess
from bot.turn.credentials import Credentials, Leg, TurnRoute
from bot.turn.policy import Step, plan_next
from providers import Provider, StreamAdapter, create_adapter
from providers.log_safe import loggable
from providers.types import ProviderError

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 8  # one turn never hammers a provider more than this
PROVIDER_TIMEOUT = 120.0


def target_label(target: ModelTarget) -> str:
    return f"{target.provider}/{target.model}"


def open_adapter(target: ModelTarget, lease: KeyLease, verbatim_tool_calling: bool,
                 access: ProviderAccess) -> StreamAdapter | None:
    """The adapter for one attempt; None when the model cannot be used at all (logged).

    Verbatim tool-call parsing is a server switch for custom endpoints only: the hosted
    providers have native tool calling. `access` bounds where a custom endpoint may
    connect (public addresses only unless the operator allows private ones; the
    operator's own default address may be private), says what the operator said custom
    endpoints take, and lends the adapter the shared HTTP client, so an attempt builds
    no TLS context and may reuse a warm connection; the key still goes with this
    attempt's requests.
    """
    try:
        return create_adapter(target.provider, api_key=lease.secret, model=target.model,
                              base_url=target.base_url, timeout=PROVIDER_TIMEOUT, hints=access.hints(target),
                              verbatim_tool_calling=verbatim_tool_calling and target.provider is Provider.CUSTOM,
                              endpoint_policy=access.policy_for(target), clients=access.clients)
    except ValueError as exc:  # e.g. custom without an address; the text never holds the key
        log.error("model %s cannot be used: %s", loggable(target_label(target)), loggable(exc))
        return None


@dataclass(frozen=True, slots=True)
class Attempt:
    """One try: whose keys (leg), which model, which key, and where it stands in the route."""

    leg: Leg
    target: ModelTarget
    lease: KeyLease
    leg_index: int
    model_index: int
    key_index: int
    pool_size: int

    @property
    def uses_fallback(self) -> bool:
        """Not the route's first model of its first leg."""
        return (self.leg_index, self.model_index) != (0, 0)


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    """What one attempt used and how it ended (masked key only)."""

    credential_source: str
    provider: str
    model: str
    key: str
    outcome: str  # "ok", "interrupted", or the planner's reason
    action: str | None = None  # the planner's step after a failure


class AttemptPlan:
    """Async iterator of attempts; `failed` and `skip_model` steer what comes next."""

    def __init__(self, route: TurnRoute, credentials: Credentials, config: ConfigSnapshot,
                 max_attempts: int = MAX_ATTEMPTS) -> None:
        self.route = route
        self.records: list[AttemptRecord] = []
        self._credentials = credentials
        self._config = config  # the question's one configuration read: pools come from it
        self._max_attempts = max_attempts
        self._skip_model = False
        self._stopped = False
        self._key_scoped_only = True  # every failure of the current model was the key's
        self.keys_configured = False  # some pool walked had a key (usable or resting)

    def __aiter__(self) -> AsyncIterator[Attempt]:
        return self._walk()

    async def _walk(self) -> AsyncIterator[Attempt]:
        for leg_index, leg in enumerate(self.route.legs):
            for model_index, target in enumerate(leg.chain):
                pool = await self._credentials.pool(self._config, leg, target)
                # A pool without `configured` (a personal key) is one configured key.
                self.keys_configured |= bool(pool) or getattr(pool, "configured", True)
                self._skip_model, self._key_scoped_only = False, True
                for key_index, lease in enumerate(pool):
                    if self._stopped or len(self.records) >= self._max_attempts:
                        return
                    yield Attempt(leg, target, lease, leg_index, model_index, key_index, len(pool))
                    if self._skip_model or self._stopped:
                        break

    @property
    def tried_any(self) -> bool:
        return bool(self.records)

    def skip_model(self, attempt: Attempt) -> None:
        """The current model cannot be used at all (e.g. it has no address): the next model."""
        self._record(attempt, "unusable_model", "next_model")
        self._skip_model = True

    async def succeeded(self, attempt: Attempt, outcome: str = "ok") -> None:
        self._record(attempt, outcome)
        await self._credentials.succeeded(attempt.lease)

    async def failed(self, attempt: Attempt, error: ProviderError) -> Step:
        """Decide the next step after `error`, rest the key when it is to blame."""
        step = plan_next(error, now=self._credentials.now())
        self._record(attempt, step.reason, step.action)
        address = answered_at(error)
        log.warning("attempt failed: %s %s key %s (%s%s): %s -> %s", attempt.leg.credential_source,
                    target_label(attempt.target), attempt.lease.masked, error.kind,
                    f" at {loggable(address)}" if address else "", step.reason, step.action)
        if step.scope in ("key", "transient"):  # a model's or the content's fault is not the key's
            await self._credentials.failed(attempt.lease, step)
        self._key_scoped_only = self._key_scoped_only and step.scope == "key"
        self._skip_model = step.action == "next_model"
        self._stopped = step.action == "stop"
        return step

    def pool_exhausted(self, attempt: Attempt) -> bool:
        """Every key of a pool of several failed for its own reasons ("all keys" wording)."""
        last_key = attempt.key_index == attempt.pool_size - 1
        return self._key_scoped_only and last_key and attempt.pool_size > 1

    def _record(self, attempt: Attempt, outcome: str, action: str | None = None) -> None:
        self.records.append(AttemptRecord(attempt.leg.credential_source, attempt.target.provider,
                                          attempt.target.model, attempt.lease.masked, outcome, action))
