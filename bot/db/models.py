"""ORM models. Discord snowflakes are stored as BigInteger given explicitly."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, DateTime, String, false, func
from sqlalchemy.orm import Mapped, mapped_column

from bot.db.base import Base


class Server(Base):
    """A Discord server (guild) the bot serves, with its own preferences."""

    __tablename__ = "servers"

    guild_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    locale: Mapped[str | None] = mapped_column(String(16))
    thought_log_channel_id: Mapped[int | None] = mapped_column(BigInteger)
    member_keys_required: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
