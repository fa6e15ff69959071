"""Where a turn gets its route and keys, and where it writes key health.

`DatabaseCredentials` reads routes and pools from the configuration cache, which a
change in any shard invalidates (a rest another shard set is seen after its next poll;
one set here at once, `bot.turn.key_use`), and writes key health in batches off the
answer's path. `EnvironmentCredentials` serves a bot that has no database: the operator's DEFAULT_TEXT_* route and key pool, in
configured order, with no health kept. Both own the clock that decides which keys
still rest, so nothing else in the turn needs one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal, Protocol

from sqlalchemy.exc import SQLAlchemyError

from bot.load.bookkeeping import KeyFailure, KeySuccess
from bot.load.config_cache import ConfigCache, ConfigSnapshot, is_busy
from bot.load.write_behind import WriteBehind
from bot.repo import ActiveRoute, KeyLease, KeyRef, ModelTarget, PersonalInfo
from bot.repo.keys import KEYLESS_LEASE, KeyPool, usable_leases
from bot.repo.personal import personal_lease
from bot.repo.routes import active_route_of, environment_target, pool_source
from bot.settings import Settings
from bot.turn.key_use import KeyUse
from bot.vault import Vault, VaultError, fingerprint, last4, mask, masked_tail
from providers.identity import Provider
from providers.log_safe import loggable

if TYPE_CHECKING:
    from bot.turn.policy import Step

log = logging.getLogger(__name__)


def utc_now() -> datetime:
    return datetime.now(UTC)


class CredentialsUnavailable(Exception):
    """The database cannot be read in the middle of a turn (a key pool's health).

    `busy` when the database is there but did not answer in time (every pooled
    connection taken, or SQLite's write lock held past its busy timeout): the member is
    asked to try again in a moment rather than told the database is down."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(type(cause).__name__)
        self.busy = is_busy(cause)

    @property
    def notice(self) -> str:
        return "chat.database_busy" if self.busy else "chat.database_down"


CredentialSource = Literal["personal", "server"]


@dataclass(frozen=True)
class Leg:
    """One credential route of a turn: whose keys pay, and the models to try in order."""

    credential_source: CredentialSource
    chain: tuple[ModelTarget, ...]
    personal: PersonalInfo | None = None


@dataclass(frozen=True)
class TurnRoute:
    """The legs to walk (personal, then the server's when allowed); `blocked` says why
    no turn can run; `verbatim_tool_calling` is the server's capability switch;
    `operator_default`: the server's leg is paid by the operator's default (its own limits)."""

    legs: tuple[Leg, ...]
    blocked: str | None = None
    verbatim_tool_calling: bool = False
    operator_default: bool = False  # the server's leg is the operator's environment default


def legs_of(route: ActiveRoute) -> tuple[Leg, ...]:
    """A personal route falls back to the server's only when ActiveRoute allows it."""
    if route.blocked is not None or route.credential_source is None:
        return ()
    first = Leg(route.credential_source, route.chain, route.personal)
    if route.credential_source == "personal" and route.server_fallback is not None:
        return (first, Leg("server", route.server_fallback.chain))
    return (first,)


class Credentials(Protocol):
    # What answers when the database cannot be read (the operator's choice), if anything.
    fallback: Credentials | None

    def now(self) -> datetime:
        """The time that decides which keys rest (injected in tests)."""

    def route(self, config: ConfigSnapshot) -> TurnRoute:
        """The legs of this member's turn, from the question's configuration (no I/O)."""

    async def pool(self, config: ConfigSnapshot, leg: Leg, target: ModelTarget) -> list[KeyLease]:
        """Usable (not cooling) keys for one model of a leg, in the order to try them."""

    async def succeeded(self, lease: KeyLease) -> None:
        """Count a success and end any cool-down; never raises (bookkeeping must not end a turn)."""

    async def failed(self, lease: KeyLease, step: Step) -> None:
        """Count a failure and rest the key as the step says; never raises."""


class DatabaseCredentials:
    """Route and pools from the configuration cache (`bot.load.config_cache`, read from the
    database once per change), key health written in batches (`bot.load.write_behind`)."""

    def __init__(self, config: ConfigCache, vault: Vault, writes: WriteBehind,
                 clock: Callable[[], datetime] = utc_now) -> None:
        self._config = config
        self._vault = vault
        self._settings = config.settings
        self._writes = writes
        self._use = KeyUse()
        self.now = clock
        self.fallback: Credentials | None = (
            EnvironmentCredentials(self._settings, clock) if self._settings.DATABASE_DOWN_USES_DEFAULT else None)

    def route(self, config: ConfigSnapshot) -> TurnRoute:
        if config.server is None:  # read_config failed: the question flow decided already
            return TurnRoute((), "no_route")
        facts = config.server.facts
        active = active_route_of(facts, config.personal.info)
        stored = facts.stored
        return TurnRoute(legs_of(active), active.blocked, bool(stored and stored.verbatim_tool_calling_enabled),
                         facts.route.origin == "environment")

    async def pool(self, config: ConfigSnapshot, leg: Leg, target: ModelTarget) -> list[KeyLease]:
        try:
            return self._use.usable(await self._pool(config, leg, target, self.now()), self.now())
        except VaultError as exc:  # the operator dropped the encryption key these were stored under
            log.error("keys for %s/%s cannot be used: %s", target.provider, loggable(target.model), loggable(exc))
            return []
        except (SQLAlchemyError, OSError) as exc:
            raise CredentialsUnavailable(exc) from exc

    async def _pool(self, config: ConfigSnapshot, leg: Leg, target: ModelTarget, now: datetime) -> list[KeyLease]:
        if leg.credential_source == "personal":
            if leg.personal is None:
                return []
            lease = personal_lease(self._vault, config.personal, now)
            return [lease] if lease is not None else []
        server = config.server
        if server is None:
            return []
        source = pool_source(server.facts, self._settings, target)
        if source.kind == "server":
            return usable_leases(self._vault, list(server.keys), target.provider, now)
        if source.kind == "environment":
            return await self._environment_pool(now)
        return KeyPool([KEYLESS_LEASE]) if source.kind == "keyless" else KeyPool(configured=source.configured)

    async def _environment_pool(self, now: datetime) -> list[KeyLease]:
        secrets = self._settings.default_text_api_keys()
        health = await self._config.environment_health()
        return KeyPool([KeyLease(KeyRef("environment", fingerprint(s)), masked_tail(last4(s)), s)
                        for s, h in zip(secrets, health, strict=True) if not h.cooling(now)], configured=bool(secrets))

    async def succeeded(self, lease: KeyLease) -> None:
        """Remembered here at once; written with the next batch."""
        self._use.used(lease.ref)
        self._writes.put(KeySuccess(lease.ref, self.now()))

    async def failed(self, lease: KeyLease, step: Step) -> None:
        """The rest applies here at once; written (and told to other processes) with the next batch."""
        self._use.rested(lease.ref, step.cool_down_until, self.now())
        self._writes.put(KeyFailure(lease.ref, step.reason, self.now(), step.cool_down_until))


class EnvironmentCredentials:
    """The operator's environment default only, for a bot without a database."""

    def __init__(self, settings: Settings, clock: Callable[[], datetime] = utc_now) -> None:
        self._settings = settings
        self.now = clock
        self.fallback: Credentials | None = None

    def route(self, config: ConfigSnapshot) -> TurnRoute:
        target = environment_target(self._settings)
        if target is None:
            return TurnRoute((), "no_route")
        return TurnRoute((Leg("server", (target,)),), operator_default=True)

    async def pool(self, config: ConfigSnapshot, leg: Leg, target: ModelTarget) -> list[KeyLease]:
        """The configured keys in order; a `custom` default without keys is a keyless
        endpoint (a local model server), asked without a key as with a database."""
        secrets = self._settings.default_text_api_keys()
        if not secrets and target.provider is Provider.CUSTOM and target.base_url:
            return [KEYLESS_LEASE]
        return [KeyLease(KeyRef("environment", fingerprint(s)), mask(s), s) for s in secrets]

    async def succeeded(self, lease: KeyLease) -> None:
        """No database: nothing to record."""

    async def failed(self, lease: KeyLease, step: Step) -> None:
        """No database: nothing to record."""
