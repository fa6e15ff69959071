"""The tables several bot processes agree through: each scope's configuration stamp and
the clock the stamps are taken from (`bot.repo.versions`), and when a shard last
identified in each of Discord's identify buckets (`bot.load.identify`)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, DateTime, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from bot.db.base import Base


class ConfigVersion(Base):
    """The stamp of one scope's settings ("server": a guild id, "member": a user id),
    taken from `ConfigClock` in the transaction of every settings write; processes poll
    the stamps above the last one they saw to drop their cached copies
    (`bot.load.config_cache`)."""

    __tablename__ = "config_versions"

    scope: Mapped[str] = mapped_column(String(16), primary_key=True)
    scope_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    version: Mapped[int] = mapped_column(BigInteger, index=True)


class ConfigClock(Base):
    """One row whose value every stamp is taken from. Its row lock orders the stamps
    by commit: a writer holding stamp N blocks the next until it commits, so a poller
    that saw N+1 can never miss N."""

    __tablename__ = "config_clock"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    value: Mapped[int] = mapped_column(BigInteger)


class IdentifyTurn(Base):
    """When a shard of any process last identified in one of Discord's identify buckets
    (`shard_id % max_concurrency`), by the database's clock; read and written under that
    bucket's advisory lock, so processes starting together identify 5 s apart per bucket
    (`bot.load.identify`). Used on PostgreSQL only: a SQLite file serves one process."""

    __tablename__ = "identify_turns"

    bucket: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    identified_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
