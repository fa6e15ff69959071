"""ORM models. Discord snowflakes are stored as BigInteger given explicitly."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    false,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
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
# cool-downs) lives here. Processes keep copies of configuration (`bot.load.config_cache`),
# dropped when a write bumps its scope's stamp (`ConfigVersion` below).


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


class CapabilitySettings(Base):
    """The settings a capability declares (`bot.capabilities.declared`), for one server:
    one JSON object of the values a manager set, checked against the declaration when
    read (no row, or no value: the declared default)."""

    __tablename__ = "capability_settings"

    guild_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("servers.guild_id", ondelete="CASCADE"), primary_key=True,
        autoincrement=False,
    )
    capability: Mapped[str] = mapped_column(String(32), primary_key=True)
    # JSONB on PostgreSQL: a write merges its values into the stored ones in one statement.
    settings: Mapped[dict[str, Any]] = mapped_column(JSON().with_variant(JSONB(), "postgresql"))


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


# ---- who and where the bot answers, and in what voice ---------------------------------


class Persona(Base):
    """The text a server's managers wrote to set the bot's voice: for the whole server
    (channel_id NULL) or for one channel, where it replaces the server's."""

    __tablename__ = "personas"
    __table_args__ = (
        UniqueConstraint("guild_id", "channel_id"),
        # NULLs are distinct in unique constraints, so the server-wide row needs its own index.
        Index(
            "uq_personas_guild_id_server", "guild_id", unique=True,
            sqlite_where=text("channel_id IS NULL"), postgresql_where=text("channel_id IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(AutoId, primary_key=True, autoincrement=True)
    guild_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("servers.guild_id", ondelete="CASCADE"))
    channel_id: Mapped[int | None] = mapped_column(BigInteger)
    body: Mapped[str] = mapped_column(Text)


class ChannelMode(Base):
    """Whether the bot answers in every channel (the default, no row) or only allowed ones."""

    __tablename__ = "channel_modes"

    guild_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("servers.guild_id", ondelete="CASCADE"), primary_key=True,
        autoincrement=False,
    )
    mode: Mapped[str] = mapped_column(String(16))


class ChannelRule(Base):
    """One channel allowed or denied (a channel holds one rule at a time)."""

    __tablename__ = "channel_rules"
    __table_args__ = (UniqueConstraint("guild_id", "channel_id"),)

    id: Mapped[int] = mapped_column(AutoId, primary_key=True, autoincrement=True)
    guild_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("servers.guild_id", ondelete="CASCADE")
    )
    channel_id: Mapped[int] = mapped_column(BigInteger)
    rule: Mapped[str] = mapped_column(String(16))


class AccessRule(Base):
    """A member or role blocked, or a role required to chat with the bot."""

    __tablename__ = "access_rules"
    __table_args__ = (UniqueConstraint("guild_id", "target_id", "kind"),)

    id: Mapped[int] = mapped_column(AutoId, primary_key=True, autoincrement=True)
    guild_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("servers.guild_id", ondelete="CASCADE")
    )
    target_id: Mapped[int] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(16))


# ---- usage, limits, prices and generation settings -------------------------------------
# Counters are rows in the shared database, added to with single upserts, so every bot
# process sharing it counts (and enforces) the same numbers.


class UsageDay(Base):
    """Tokens of one UTC day for one member, server (NULL in a DM), model and payer.

    Counts the provider reported and counts estimated from characters are kept in separate
    rows (`estimated` is part of the key), so every upsert only adds and a report can
    say which figures are guesses.
    """

    __tablename__ = "usage_days"
    __table_args__ = (
        UniqueConstraint("guild_id", "user_id", "provider", "model", "credential_source", "day",
                         "estimated", name="uq_usage_days_key"),
        # NULLs are distinct in unique constraints, so DM rows need their own index.
        Index(
            "uq_usage_days_key_dm", "user_id", "provider", "model", "credential_source", "day",
            "estimated", unique=True,
            sqlite_where=text("guild_id IS NULL"), postgresql_where=text("guild_id IS NULL"),
        ),
        Index("ix_usage_days_guild_day", "guild_id", "day"),
        Index("ix_usage_days_user_day", "user_id", "day"),
    )

    id: Mapped[int] = mapped_column(AutoId, primary_key=True, autoincrement=True)
    guild_id: Mapped[int | None] = mapped_column(BigInteger)
    user_id: Mapped[int] = mapped_column(BigInteger)
    provider: Mapped[str] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(200))
    credential_source: Mapped[str] = mapped_column(String(16))
    day: Mapped[date] = mapped_column(Date)
    estimated: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    input_tokens: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    output_tokens: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    reasoning_tokens: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    cached_input_tokens: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    messages: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    searches: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")


class MessageHour(Base):
    """Messages one member sent to a limited route in one clock hour (UTC).

    An hourly bucket rather than one row per message: admission is one atomic upsert
    that adds one only while the count is under the limit (so two processes can never
    both take the last message), the table grows by one row per member-hour instead of
    per message, and the reset time a member is told is simply the next full hour.
    """

    __tablename__ = "message_hours"
    __table_args__ = (UniqueConstraint("guild_id", "user_id", "hour", name="uq_message_hours_key"),)

    id: Mapped[int] = mapped_column(AutoId, primary_key=True, autoincrement=True)
    guild_id: Mapped[int] = mapped_column(BigInteger)
    user_id: Mapped[int] = mapped_column(BigInteger)
    hour: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    messages: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class SearchDay(Base):
    """Web searches one member ran on the server's keys in one server on one UTC day.

    A bucket like `MessageHour`, not the day rows of usage: a search is counted before
    it runs, with one atomic upsert that adds one only while under the limit, so every
    search of an answer (and of two processes at once) sees the ones before it; usage
    rows are written in batches after the answer, too late for that.
    """

    __tablename__ = "search_days"

    guild_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    user_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    searches: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class ModelPrice(Base):
    """What a server pays per million tokens of one model (any provider when NULL), and
    per thousand web searches (NULL: searches not priced)."""

    __tablename__ = "model_prices"
    __table_args__ = (UniqueConstraint("guild_id", "model", name="uq_model_prices_model"),)

    id: Mapped[int] = mapped_column(AutoId, primary_key=True, autoincrement=True)
    guild_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("servers.guild_id", ondelete="CASCADE"))
    provider: Mapped[str | None] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(200))
    input_per_million: Mapped[float] = mapped_column(Float)
    output_per_million: Mapped[float] = mapped_column(Float)
    per_1000_searches: Mapped[float | None] = mapped_column(Float)


class UsageLimits(Base):
    """A server's limits; NULL means no limit."""

    __tablename__ = "usage_limits"

    guild_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("servers.guild_id", ondelete="CASCADE"), primary_key=True,
        autoincrement=False,
    )
    messages_per_hour: Mapped[int | None] = mapped_column(Integer)
    tokens_per_day: Mapped[int | None] = mapped_column(BigInteger)
    server_tokens_per_day: Mapped[int | None] = mapped_column(BigInteger)
    # Web searches one member may run per UTC day on the server's keys.
    searches_per_day: Mapped[int | None] = mapped_column(Integer)
    images_per_day: Mapped[int | None] = mapped_column(Integer)  # per member, on any route (images)


class GenerationParams(Base):
    """A server's generation settings; NULL means the provider's (or operator's) default."""

    __tablename__ = "generation_params"

    guild_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("servers.guild_id", ondelete="CASCADE"), primary_key=True,
        autoincrement=False,
    )
    temperature: Mapped[float | None] = mapped_column(Float)
    max_output_tokens: Mapped[int | None] = mapped_column(Integer)
    reasoning: Mapped[str | None] = mapped_column(String(8))


# ---- conversations -------------------------------------------------------------------
class AnswerPart(Base):
    """One Discord message of the bot's answer: which answer it belongs to (its first
    message) and which question it answered, so a reply to any part continues the whole
    answer, also after a restart."""

    __tablename__ = "answer_parts"

    message_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    first_message_id: Mapped[int] = mapped_column(BigInteger, index=True)
    question_id: Mapped[int] = mapped_column(BigInteger)
    channel_id: Mapped[int] = mapped_column(BigInteger)
    position: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class ListenChannel(Base):
    """A channel where every member message is a question without a mention, answered at
    most once per `gap_seconds` so a busy channel does not become the bot's monologue."""

    __tablename__ = "listen_channels"

    guild_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("servers.guild_id", ondelete="CASCADE"), primary_key=True,
        autoincrement=False,
    )
    channel_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    gap_seconds: Mapped[float] = mapped_column(Float, default=5.0, server_default="5")


class AnswerRecord(Base):
    """One answer of the bot, found by its first message: who asked, which messages made
    the question and which answer it continued, so the answer's buttons (regenerate,
    continue, show reasoning) can act on it after the fact and after a restart."""

    __tablename__ = "answers"

    first_message_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    channel_id: Mapped[int] = mapped_column(BigInteger)
    guild_id: Mapped[int | None] = mapped_column(BigInteger)
    asker_id: Mapped[int] = mapped_column(BigInteger)
    # Comma-separated message ids of the question, in order (a batched question has several).
    question_ids: Mapped[str] = mapped_column(String(400))
    continues_id: Mapped[int | None] = mapped_column(BigInteger, index=True)
    finish_reason: Mapped[str | None] = mapped_column(String(16))
    reasoning: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    # The web pages the answer was grounded on, one "url\ttitle" per line, citation order
    # (the Sources button lists those the sources line under the answer had no room for).
    sources: Mapped[str | None] = mapped_column(Text)


from bot.capabilities.voice.storage import VoiceTranscript  # noqa: E402,F401 - voice's table, in the metadata
from bot.db import models_reminders  # noqa: E402, F401 - the reminders tables, in this metadata
from bot.db.models_images import ImageDay  # noqa: E402,F401 - images' table, in the metadata
from bot.db.models_mcp_tools import McpToolSwitch  # noqa: E402,F401 - MCP tools switches, in the metadata
from bot.db.models_memory import Memory, MemoryOptIn, ServerFact  # noqa: E402,F401 - memory's tables, in the metadata
from bot.db.models_processes import ConfigClock  # noqa: E402,F401 - the processes' tables, in the metadata
