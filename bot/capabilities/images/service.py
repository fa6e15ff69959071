"""The bot's images: the server's own route or else the operator's (`Painter`), behind
each member's daily limit (the lowest of `IMAGES_PER_DAY` and the server's `/limits`
`images_per_day`), shared by `/imagine` and the `draw_image` tool. An image is counted
before it is asked for and given back when none came, so a refused or failed ask costs
the member nothing."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.capabilities.images.drawing import Drawing, Painter
from bot.capabilities.images.server_route import Refusal, ServerKeys, server_painter
from bot.capabilities.images.storage import count_server_image, give_back_image, take_image
from bot.turn.key_use import KeyUse
from bot.vault import Vault
from providers.images import ImageAsk

if TYPE_CHECKING:
    from bot.load.config_cache import ServerConfig
    from bot.settings import Settings


class ImagePainter(Protocol):
    @property
    def route(self) -> tuple[str, str, str]:
        """(provider, model, whose keys: "server" or "operator")."""

    async def draw(self, ask: ImageAsk) -> Drawing:
        """The image, or the member's line saying why none came."""


@dataclass(frozen=True)
class DrawPlace:
    """Where an image is drawn: on which route, in which server (None: a DM) and within its
    `/limits` bound (None: the operator's alone)."""

    route: ImagePainter
    guild_id: int | None = None
    server_limit: int | None = None

    @property
    def on_operator(self) -> bool:
        """Drawn with the operator's keys (priced at IMAGE_PRICE in the member's usage)."""
        return self.route.route[2] == "operator"


@dataclass
class Images:
    """Drawing for a member: their day's count, then the route."""

    painter: Painter | None  # the operator's route; None: the operator named none
    sessions: async_sessionmaker[AsyncSession] | None
    per_day: int  # 0: no limit
    vault: Vault | None = None  # reads a server's keys for its own route
    allow_private: bool = False  # ALLOW_PRIVATE_ENDPOINTS, for a server's custom address
    key_use: KeyUse = field(default_factory=KeyUse)  # servers' keys used here, for rotation

    @classmethod
    def of(cls, settings: Settings, sessions: async_sessionmaker[AsyncSession] | None,
           vault: Vault | None = None) -> Images:
        return cls(Painter.of(settings), sessions, settings.IMAGES_PER_DAY, vault, settings.ALLOW_PRIVATE_ENDPOINTS)

    def route_for(self, server: ServerConfig | None) -> ImagePainter | Refusal:
        """The server's own route when it set one (with one of its keys), else the
        operator's; or the line saying why nothing can be drawn here."""
        target = server.image_route if server is not None else None
        if target is None:
            return self.painter if self.painter is not None else ("commands.imagine.no_route", {})
        if self.vault is None:
            return "commands.imagine.no_server_key", {"provider": target.provider}
        stored = server.facts.stored if server is not None else None
        keys = ServerKeys(list(server.keys), self.vault, self.key_use)
        return server_painter(target, stored.base_url if stored is not None else None, keys, self.sessions,
                              self.allow_private)

    def limit(self, server_limit: int | None) -> int | None:
        """The member's daily bound: the operator's and the server's, the lower (None: none)."""
        bounds = [bound for bound in (self.per_day, server_limit) if bound]
        return min(bounds) if bounds else None

    async def draw_for(self, member_id: int, ask: ImageAsk, place: DrawPlace) -> Drawing:
        """`ask` drawn on the place's route for `member_id`, or the line saying why not
        (their day is full, a safety refusal, a failure). The day counts their images
        everywhere; the server's bound applies to that count where it is lower. A drawn
        image is counted in the server's usage."""
        day = datetime.now(UTC).date()
        limit = self.limit(place.server_limit)
        if self.sessions is not None:
            async with self.sessions() as session, session.begin():
                taken = await take_image(session, member_id, day, limit, on_operator=place.on_operator)
            if not taken:
                return Drawing(line="chat.images.limit", params={"limit": limit or 0})
        drawing = await place.route.draw(ask)
        if self.sessions is None or (drawing.image is not None and place.guild_id is None):
            return drawing
        async with self.sessions() as session, session.begin():
            if drawing.image is None:
                await give_back_image(session, member_id, day, on_operator=place.on_operator)
            else:
                assert place.guild_id is not None
                await count_server_image(session, place.guild_id, day, place.route.route)
        return drawing
