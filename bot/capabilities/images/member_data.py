"""What images keep about a member, for `/privacy export` and `/privacy erase`: how many
images they drew on each UTC day (the daily limit's count) and how many of them on the operator's
route (what their usage prices); prompts and images are not kept."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.capabilities.member_data import Exported, MemberData
from bot.db.models_images import ImageDay


class ImageData(MemberData):
    """The member's image counts, one row per day, oldest first."""

    name = "image_days"

    async def export(self, session: AsyncSession, user_id: int) -> Exported:
        rows = await session.scalars(select(ImageDay).where(ImageDay.user_id == user_id).order_by(ImageDay.day))
        return [{"day": row.day.isoformat(), "images": row.images, "on_operators_route": row.operator_images}
                for row in rows]

    async def erase(self, session: AsyncSession, user_id: int) -> int:
        """Every day before today: today's row is what the daily limit counts (erasing it
        would hand the member a fresh allowance, as with the other counters)."""
        today = datetime.now(UTC).date()
        gone = await session.execute(delete(ImageDay).where(ImageDay.user_id == user_id, ImageDay.day < today))
        return int(gone.rowcount or 0)
