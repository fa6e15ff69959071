"""What reminders keep about a member, for `/privacy export` and `/privacy erase`: their
reminders (waiting, delivered and failed) and their time zone."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.capabilities.member_data import Exported, MemberData, id_text
from bot.capabilities.reminders.storage import utc
from bot.db.models_reminders import MemberTimeZone, Reminder


def _when(moment: object) -> str | None:
    return utc(moment).isoformat() if moment is not None else None  # type: ignore[arg-type]


class ReminderData(MemberData):
    """The member's reminders, then their time zone (one row each)."""

    name = "reminders"

    async def export(self, session: AsyncSession, user_id: int) -> Exported:
        rows = await session.scalars(select(Reminder).where(Reminder.user_id == user_id)
                                     .order_by(Reminder.created_at, Reminder.id))
        kept: Exported = [{"kind": "reminder", "text": r.text, "due_at": _when(r.due_at), "state": r.state,
                           "server_id": id_text(r.guild_id), "channel_id": id_text(r.channel_id),
                           "created_at": _when(r.created_at), "delivered_at": _when(r.delivered_at)}
                          for r in rows]
        zone = await session.scalar(select(MemberTimeZone.zone).where(MemberTimeZone.user_id == user_id))
        if zone is not None:
            kept.append({"kind": "time_zone", "zone": zone})
        return kept

    async def erase(self, session: AsyncSession, user_id: int) -> int:
        reminders = await session.execute(delete(Reminder).where(Reminder.user_id == user_id))
        zones = await session.execute(delete(MemberTimeZone).where(MemberTimeZone.user_id == user_id))
        return int(reminders.rowcount or 0) + int(zones.rowcount or 0)
