"""ORM models. Discord snowflakes are stored as BigInteger given explicitly."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    UniqueConstraint,
    false,
    func,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from bot.db.base import AutoId, Base


class Server(Base):
    """A Discord server (guild) the bot serves, with its own preferences."""

    __tablename__ = "servers"

    guild_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    locale: Mapped[str | None] = mapped_column(String(16))
    thought_log_channel_id: Mapped[int | None] = mapped_column(BigInteger)
    member_keys_required: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


# ---- configuration -------------------------------------------------------------------
# Every row that several shard processes must agree on (configuration, key health,
# cool-downs) lives here; nothing of it is cached in process memory.


class ServerTextConfig(Base):
    """The server's primary text route; absent means the environment default applies."""

    __tablename__ = "server_text_configs"

    guild_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("servers.guild_id", ondelete="CASCADE"), primary_key=True,
        autoincrement=False,
    )
    provider: Mapped[str | None] = mapped_column(String(32))
    model: Mapped[str | None] = mapped_column(String(200))
    base_url: Mapped[str | None] = mapped_column(String(2048))
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )


class ServerCapabilities(Base):
    """Per-server switches for behaviour that changes what the model may do."""

    __tablename__ = "server_capabilities"

    guild_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("servers.guild_id", ondelete="CASCADE"), primary_key=True,
        autoincrement=False,
    )
    verbatim_tool_calling_enabled: Mapped[bool] = mapped_column(
        Boolean, default=False, server_default=false()
    )


class _KeyHealth:
    """Health columns shared by every stored key; updated with atomic SQL increments."""

    successes: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    errors: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    last_error_type: Mapped[str | None] = mapped_column(String(64))
    last_error_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    cooling_down_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class ServerApiKey(_KeyHealth, Base):
    """One key of a server's rotation pool for one provider (Fernet-encrypted).

    `key_fingerprint` is a keyed hash (see bot.vault) so the database itself refuses the
    same key twice in one pool; rows stored before it existed hold NULL until a rotation.
    """

    __tablename__ = "server_api_keys"
    __table_args__ = (
        UniqueConstraint("guild_id", "provider", "label"),
        UniqueConstraint("guild_id", "provider", "key_fingerprint",
                         name="uq_server_api_keys_key_fingerprint"),
    )

    id: Mapped[int] = mapped_column(AutoId, primary_key=True, autoincrement=True)
    guild_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("servers.guild_id", ondelete="CASCADE"), index=True
    )
    provider: Mapped[str] = mapped_column(String(32))
    label: Mapped[str] = mapped_column(String(64))
    encrypted_key: Mapped[bytes] = mapped_column(LargeBinary)
    last4: Mapped[str] = mapped_column(String(4))
    key_fingerprint: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class ModelFallback(Base):
    """One step of a server's ordered model fallback chain, tried after the primary."""

    __tablename__ = "model_fallbacks"
    __table_args__ = (
        UniqueConstraint("guild_id", "position"),
        UniqueConstraint("guild_id", "provider", "model", name="uq_model_fallbacks_target"),
    )

    id: Mapped[int] = mapped_column(AutoId, primary_key=True, autoincrement=True)
    guild_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("servers.guild_id", ondelete="CASCADE"), index=True
    )
    position: Mapped[int] = mapped_column(Integer)
    provider: Mapped[str] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(200))


class PersonalConfig(_KeyHealth, Base):
    """A member's own provider set-up, for one server or (guild_id NULL) everywhere."""

    __tablename__ = "personal_configs"
    __table_args__ = (
        UniqueConstraint("user_id", "guild_id"),
        # NULLs are distinct in unique constraints, so the global row needs its own index.
        Index(
            "uq_personal_configs_user_id_global", "user_id", unique=True,
            sqlite_where=text("guild_id IS NULL"), postgresql_where=text("guild_id IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(AutoId, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(BigInteger, index=True)
    guild_id: Mapped[int | None] = mapped_column(
        BigInteger, ForeignKey("servers.guild_id", ondelete="CASCADE")
    )
    provider: Mapped[str | None] = mapped_column(String(32))
    model: Mapped[str | None] = mapped_column(String(200))
    encrypted_key: Mapped[bytes | None] = mapped_column(LargeBinary)
    last4: Mapped[str | None] = mapped_column(String(4))
    override_enabled: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # Off by default: a member who brought a key chose that provider on purpose.
    server_fallback_allowed: Mapped[bool] = mapped_column(
        Boolean, default=False, server_default=false()
    )


class EnvironmentKeyHealth(_KeyHealth, Base):
    """Health of a key from DEFAULT_TEXT_API_KEYS, found by a SHA-256 fingerprint (the key
    itself stays in the environment), so shard processes share its cool-downs."""

    __tablename__ = "environment_key_health"

    fingerprint: Mapped[str] = mapped_column(String(64), primary_key=True)
