"""The memory capability's tables (`bot.capabilities.memory`): a member's switch, the
facts the member asked the bot to keep, and the facts a server's managers set."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, DateTime, ForeignKey, Index, String, func
from sqlalchemy.orm import Mapped, mapped_column

from bot.db.base import AutoId, Base

FACT_LENGTH = 500  # a member's memory or a server fact, in characters


class MemoryOptIn(Base):
    """A member who turned memory on (or on and then off): one row per member, everywhere."""

    __tablename__ = "memory_opt_ins"

    user_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    enabled: Mapped[bool] = mapped_column(Boolean)
    changed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class Memory(Base):
    """One fact about a member, saved at their request in a server (`guild_id`) or a DM (None)."""

    __tablename__ = "memories"
    __table_args__ = (Index("ix_memories_user_id_id", "user_id", "id"),)

    id: Mapped[int] = mapped_column(AutoId, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(BigInteger)
    guild_id: Mapped[int | None] = mapped_column(BigInteger)
    fact: Mapped[str] = mapped_column(String(FACT_LENGTH))
    saved_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class ServerFact(Base):
    """A fact a server's managers set for every member's requests there."""

    __tablename__ = "server_facts"

    id: Mapped[int] = mapped_column(AutoId, primary_key=True, autoincrement=True)
    guild_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("servers.guild_id", ondelete="CASCADE"), index=True
    )
    fact: Mapped[str] = mapped_column(String(FACT_LENGTH))
    added_by: Mapped[int] = mapped_column(BigInteger)
    added_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
