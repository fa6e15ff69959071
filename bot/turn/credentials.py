"""Where a turn gets its route and keys, and where it writes key health.

`DatabaseCredentials` reads everything fresh from the shared database on every call
(cool-downs set by another shard are seen at once). `EnvironmentCredentials` serves a
bot that has no database: the operator's DEFAULT_TEXT_* route and key pool, in
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

from bot import repo
from bot.repo import ActiveRoute, KeyLease, KeyRef, ModelTarget, PersonalInfo
from bot.settings import Settings
from bot.vault import Vault, VaultError, fingerprint, mask

if TYPE_CHECKING:
    from bot.turn.policy import Step

log = logging.getLogger(__name__)


def utc_now() -> datetime:
    return datetime.now(UTC)


class CredentialsUnavailable(Exception):
    """The database cannot be read: the turn cannot know the route or the keys."""

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
    no turn can run; `verbatim_tool_calling` is the server's capability switch."""

    legs: tuple[Leg, ...]
    blocked: str | None = None
    verbatim_tool_calling: bool = False


def legs_of(route: ActiveRoute) -> tuple[Leg, ...]:
    """A personal route falls back to the server's only when ActiveRoute allows it."""
    if route.blocked is not None or route.credential_source is None:
        return ()
    first = Leg(route.credential_source, route.chain, route.personal)
    if route.credential_source == "personal" and route.server_fallback is not None:
        return (first, Leg("server", route.server_fallback.chain))
    return (first,)


class Credentials(Protocol):
    # What answers when these credentials cannot be read (the operator's choice), if anything.
    fallback: Credentials | None

    def now(self) -> datetime:
        """The time that decides which keys rest (injected in tests)."""

    async def route(self, guild_id: int | None, user_id: int) -> TurnRoute:
        """The legs of this member's turn."""

    async def pool(self, guild_id: int | None, leg: Leg, target: ModelTarget) -> list[KeyLease]:
        """Usable (not cooling) keys for one model of a leg, in the order to try them."""

    async def succeeded(self, lease: KeyLease) -> None:
        """Count a success and end any cool-down; never raises (bookkeeping must not end a turn)."""

    async def failed(self, lease: KeyLease, step: Step) -> None:
        """Count a failure and rest the key as the step says; never raises."""


class DatabaseCredentials:
    """Route, pools and key health from the database (one short transaction per call)."""

    def __init__(self, sessions: Callable, vault: Vault, settings: Settings,
                 clock: Callable[[], datetime] = utc_now) -> None:
        self._sessions = sessions
        self._vault = vault
        self._settings = settings
        self.now = clock
        self.fallback: Credentials | None = (
            EnvironmentCredentials(settings, clock) if settings.DATABASE_DOWN_USES_DEFAULT else None)

    async def route(self, guild_id: int | None, user_id: int) -> TurnRoute:
        try:
            async with self._sessions() as session:
                active = await repo.resolve_active_route(session, self._settings, guild_id, user_id)
                verbatim = False
                if guild_id is not None:
                    verbatim = (await repo.get_server_settings(session, guild_id)).verbatim_tool_calling_enabled
        except (SQLAlchemyError, OSError) as exc:
            raise CredentialsUnavailable(type(exc).__name__) from exc
        return TurnRoute(legs_of(active), active.blocked, verbatim)

    async def pool(self, guild_id: int | None, leg: Leg, target: ModelTarget) -> list[KeyLease]:
        try:
            return await self._pool(guild_id, leg, target, self.now())
        except VaultError as exc:  # the operator dropped the encryption key these were stored under
            log.error("keys for %s/%s cannot be used: %s", target.provider, target.model, exc)
            return []
        except (SQLAlchemyError, OSError) as exc:
            raise CredentialsUnavailable(type(exc).__name__) from exc

    async def _pool(self, guild_id: int | None, leg: Leg, target: ModelTarget, now: datetime) -> list[KeyLease]:
        async with self._sessions() as session:
            if leg.credential_source == "personal":
                if leg.personal is None:
                    return []
                lease = await repo.usable_personal_key(session, self._vault, leg.personal, now)
                return [lease] if lease is not None else []
            return await repo.server_key_pool(session, self._vault, self._settings, guild_id, target, now)

    async def succeeded(self, lease: KeyLease) -> None:
        try:
            async with self._sessions() as session, session.begin():
                await repo.record_key_success(session, lease.ref, self.now())
        except Exception:  # noqa: BLE001 - health bookkeeping must not end the turn
            log.exception("recording a key success (%s) failed", lease.masked)

    async def failed(self, lease: KeyLease, step: Step) -> None:
        try:
            async with self._sessions() as session, session.begin():
                await repo.record_key_failure(session, lease.ref, step.reason, self.now(), step.cool_down_until)
        except Exception:  # noqa: BLE001 - health bookkeeping must not end the turn
            log.exception("recording a key failure (%s) failed", lease.masked)


class EnvironmentCredentials:
    """The operator's environment default only, for a bot without a database."""

    def __init__(self, settings: Settings, clock: Callable[[], datetime] = utc_now) -> None:
        self._settings = settings
        self.now = clock
        self.fallback: Credentials | None = None

    async def route(self, guild_id: int | None, user_id: int) -> TurnRoute:
        s = self._settings
        if not (s.DEFAULT_TEXT_PROVIDER and s.DEFAULT_TEXT_MODEL):
            return TurnRoute((), "no_route")
        target = ModelTarget(s.DEFAULT_TEXT_PROVIDER, s.DEFAULT_TEXT_MODEL, s.DEFAULT_TEXT_BASE_URL)
        return TurnRoute((Leg("server", (target,)),))

    async def pool(self, guild_id: int | None, leg: Leg, target: ModelTarget) -> list[KeyLease]:
        return [KeyLease(KeyRef("environment", fingerprint(s)), mask(s), s)
                for s in self._settings.default_text_api_keys()]

    async def succeeded(self, lease: KeyLease) -> None:
        """No database: nothing to record."""

    async def failed(self, lease: KeyLease, step: Step) -> None:
        """No database: nothing to record."""
