"""A server's own image route (`/model image set`): stored in `server_image_routes`, read
with the server's configuration (`load_server`, dropped on the server-scope stamp like its
text route) and drawn on with the server's keys for that provider, as its text route takes
them (`usable_leases`: resting and undecryptable keys left out, least recently used first).

The providers are the image providers with known endpoints (`openai`, `google`,
`openrouter`) and `custom`, which is the address the server's managers set for their text
route with `/model endpoint` (its address checks, and `ALLOW_PRIVATE_ENDPOINTS` again at
request time): no address is typed here. As for the text route, a custom endpoint with no
custom key stored is asked without one. A server without its own route draws on the
operator's (`DEFAULT_IMAGE_*`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.capabilities.images.drawing import Drawing, Painter
from bot.capabilities.images.route_storage import ImageTarget
from bot.repo.keys import (
    KEYLESS_LEASE,
    KeyLease,
    StoredKey,
    record_key_failure,
    record_key_success,
    usable_leases,
)
from bot.turn.key_use import KeyUse
from bot.vault import Vault
from providers.identity import Provider
from providers.images import ImageAsk

Refusal = tuple[str, dict[str, str]]


@dataclass
class ServerPainter:
    """The server's route with one of its keys: a drawn image counts as the key's success,
    a refused key as its error (its health, as `/keys list` shows it)."""

    painter: Painter
    lease: KeyLease
    sessions: async_sessionmaker[AsyncSession] | None
    key_use: KeyUse

    @property
    def route(self) -> tuple[str, str, str]:
        return self.painter.route

    async def draw(self, ask: ImageAsk) -> Drawing:
        drawing = await self.painter.draw(ask)
        if drawing.image is not None or drawing.line == "chat.images.failed_key":
            await self._remember(drawn=drawing.image is not None)
        return drawing

    async def _remember(self, drawn: bool) -> None:
        """The key's use: at the back of this process's line at once (the next image takes
        another key), and its success or error in the database."""
        ref, now = self.lease.ref, datetime.now(UTC)
        if drawn:
            self.key_use.used(ref)
        else:
            self.key_use.rested(ref, None, now)
        if self.sessions is None:
            return
        async with self.sessions() as session, session.begin():
            if drawn:
                await record_key_success(session, ref, now)
            else:
                await record_key_failure(session, ref, "image_key", now)


@dataclass(frozen=True)
class ServerKeys:
    """What a server's route takes its key from: the cached pool, the vault, and what this
    process did with keys since (`KeyUse`, so images rotate through the pool)."""

    stored: list[StoredKey]
    vault: Vault
    key_use: KeyUse


def server_painter(target: ImageTarget, facts_base_url: str | None, keys: ServerKeys,
                   sessions: async_sessionmaker[AsyncSession] | None, allow_private: bool) -> ServerPainter | Refusal:
    """The painter for the server's route with its least recently used usable key, or the
    line saying why it cannot draw (no usable key, no custom endpoint)."""
    provider = Provider(target.provider)
    if provider is Provider.CUSTOM and not facts_base_url:
        return "commands.imagine.no_server_endpoint", {}
    now = datetime.now(UTC)
    pool = usable_leases(keys.vault, keys.stored, provider.value, now)
    if provider is Provider.CUSTOM and not pool.configured:
        leases = [KEYLESS_LEASE]  # the managers' own address with no custom key: as the text route
    else:
        leases = keys.key_use.usable(pool, now)
    if not leases:
        return "commands.imagine.no_server_key", {"provider": provider.value}
    base_url = facts_base_url if provider is Provider.CUSTOM else None
    painter = Painter(provider, target.model, base_url, [leases[0].secret], allow_private=allow_private,
                      source="server")
    return ServerPainter(painter, leases[0], sessions, keys.key_use)
