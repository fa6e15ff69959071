"""The bot's images: the operator's route (`Painter`) behind each member's daily limit
(`IMAGES_PER_DAY`), shared by `/imagine` and the `draw_image` tool. An image is counted
before it is asked for and given back when none came, so a refused or failed ask costs
the member nothing."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.capabilities.images.drawing import Drawing, Painter
from bot.capabilities.images.environment import ImageEnvironment
from bot.capabilities.images.storage import give_back_image, take_image
from providers.images import ImageAsk


@dataclass
class Images:
    """Drawing for a member: their day's count, then the route."""

    painter: Painter
    sessions: async_sessionmaker[AsyncSession] | None
    per_day: int  # 0: no limit

    @classmethod
    def of(cls, settings: ImageEnvironment, sessions: async_sessionmaker[AsyncSession] | None) -> Images | None:
        """The bot's images, or None when the operator named no image route."""
        painter = Painter.of(settings)
        return None if painter is None else cls(painter, sessions, settings.IMAGES_PER_DAY)

    def limit(self, server_limit: int | None) -> int | None:
        """The member's daily bound: the operator's and the server's, the lower (None: none)."""
        bounds = [bound for bound in (self.per_day, server_limit) if bound]
        return min(bounds) if bounds else None

    async def draw_for(self, member_id: int, ask: ImageAsk, server_limit: int | None = None) -> Drawing:
        """`ask` drawn for `member_id`, or the line saying why not (their day is full, a
        safety refusal, a failure). The day counts their images everywhere; a server's
        bound (`server_limit`) applies to that count where it is lower."""
        day = datetime.now(UTC).date()
        limit = self.limit(server_limit)
        if self.sessions is not None:
            async with self.sessions() as session, session.begin():
                taken = await take_image(session, member_id, day, limit)
            if not taken:
                return Drawing(line="chat.images.limit", params={"limit": limit or 0})
        drawing = await self.painter.draw(ask)
        if drawing.image is None and self.sessions is not None:
            async with self.sessions() as session, session.begin():
                await give_back_image(session, member_id, day)
        return drawing
