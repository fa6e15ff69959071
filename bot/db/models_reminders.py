"""The reminders capability's tables (`bot.capabilities.reminders.storage` reads and
writes them): members' reminders, and each member's time zone."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, DateTime, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from bot.db.base import AutoId, Base


class Reminder(Base):
    """One reminder of one member, due at `due_at` in the channel it was set in (a DM's
    channel too). `state` is pending until delivered or failed; a process delivering it
    holds it (`claimed_by`) until `claim_until`, so no other process sends it meanwhile."""

    __tablename__ = "reminders"
    __table_args__ = (Index("ix_reminders_state_due_at", "state", "due_at"),)

    id: Mapped[int] = mapped_column(AutoId, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(BigInteger, index=True)
    guild_id: Mapped[int | None] = mapped_column(BigInteger)
    channel_id: Mapped[int] = mapped_column(BigInteger)
    text: Mapped[str] = mapped_column(Text)
    locale: Mapped[str | None] = mapped_column(String(16))
    due_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    state: Mapped[str] = mapped_column(String(16), default="pending", server_default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    claimed_by: Mapped[str | None] = mapped_column(String(64))
    claim_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    delivered_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class MemberTimeZone(Base):
    """The IANA time zone a member's reminder times are read and shown in (UTC without a row)."""

    __tablename__ = "member_time_zones"

    user_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    zone: Mapped[str] = mapped_column(String(64))
