"""Operator settings from the environment (and `.env`).

The names are fixed: operators, docker-compose and tests set them. A bad value stops
start-up with one line naming the variable (`SettingsError`), never a traceback.
"""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path
from typing import Annotated, Literal

from cryptography.fernet import Fernet
from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from bot.capabilities.images.environment import ImageEnvironment
from bot.capabilities.mcp_tools.environment import McpEnvironment
from bot.capabilities.voice.environment import VoiceEnvironment
from bot.capabilities.web_search.search_url import search_url_problem
from bot.route_problem import EnvironmentRoute
from providers import KNOWN_PROVIDERS

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///data/bot.sqlite3"
SUPPORTED_DRIVERS = ("sqlite+aiosqlite", "postgresql+asyncpg")
# What pydantic reads as a boolean; a switch setting accepts these words only.
SWITCH_WORDS = frozenset({"true", "false", "1", "0", "yes", "no", "on", "off", "t", "f", "y", "n"})
MAKE_KEY = ("32 url-safe base64-encoded bytes; make one with python -c 'from cryptography.fernet "
            "import Fernet; print(Fernet.generate_key().decode())'")


class SettingsError(Exception):
    """A setting is missing or malformed; `str()` is the one line shown to the operator."""


def is_fernet_key(value: str | bytes) -> bool:
    try:
        Fernet(value)
    except (ValueError, TypeError):
        return False
    return True


def split_csv(value: object) -> object:
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


class Settings(VoiceEnvironment, ImageEnvironment, McpEnvironment, BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", case_sensitive=True
    )

    DISCORD_TOKEN: SecretStr | None = None
    DATABASE_URL: str = DEFAULT_DATABASE_URL
    # Database connections kept open (as many again may open in a burst); each answer
    # holds one only for its short transactions. Unset: sized from MAX_CONCURRENT_ANSWERS
    # (`bot.db.engine.pool_size_for`).
    DATABASE_POOL_SIZE: int | None = Field(default=None, ge=1, le=200)
    # Answers generated at once; more questions wait in arrival order, shown "typing…"
    # once. 500 is what one process on 2 cores streams within its CPU (docs/benchmarks.md).
    MAX_CONCURRENT_ANSWERS: int = Field(default=500, ge=1, le=5000)
    # How often this process asks the database which servers' settings other processes
    # changed (one query for all servers); a change made here applies at once.
    CONFIG_POLL_SECONDS: float = Field(default=1.0, ge=0.1, le=60)
    # Key health and usage are written in batches off the answer's path, this often at most.
    DATABASE_WRITE_BATCH_MS: int = Field(default=250, ge=10, le=10_000)
    # One Fernet key, or several separated by commas: the first encrypts, all decrypt.
    BOT_ENCRYPTION_KEY: SecretStr | None = None
    DISCORD_API_BASE_URL: str | None = None
    DISCORD_GATEWAY_URL: str | None = None
    DEFAULT_TEXT_PROVIDER: str | None = None
    DEFAULT_TEXT_MODEL: str | None = None
    DEFAULT_TEXT_BASE_URL: str | None = None
    DEFAULT_TEXT_API_KEYS: Annotated[list[SecretStr], NoDecode] = Field(default_factory=list)
    ALLOW_PRIVATE_ENDPOINTS: bool = False
    # Bot-side web search for routes without a search of their own (bot/capabilities/web_search/service/): the
    # service, its address (required for searxng; brave and tavily default to their public
    # API) and its key (required for brave and tavily; never logged). Unset: no web_search
    # tool. The search URL reaches private addresses only with ALLOW_PRIVATE_ENDPOINTS or
    # SEARCH_ALLOW_PRIVATE (the latter for the search service alone, e.g. the compose
    # `search` profile's SearXNG); metadata and credential addresses never.
    SEARCH_BACKEND: Literal["searxng", "brave", "tavily"] | None = None
    SEARCH_ALLOW_PRIVATE: bool = False
    SEARCH_URL: str | None = Field(default=None, validate_default=True)
    SEARCH_API_KEY: SecretStr | None = Field(default=None, validate_default=True)
    # `custom` endpoints take OpenAI's `reasoning_effort` (many OpenAI-compatible servers refuse it).
    CUSTOM_REASONING_EFFORT: bool = False
    # The OpenAI wire API `custom` endpoints speak: Chat Completions (what most servers of
    # one's own serve) or Responses (for a server that serves `/v1/responses`).
    CUSTOM_API: Literal["chat_completions", "responses"] = "chat_completions"
    # Answer direct messages; when off a DM gets one line saying the bot answers in servers only.
    ALLOW_DMS: bool = True
    LOG_LEVEL: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO"
    # What the provider SDKs' HTTP clients send through: aiohttp reads a trickled stream for
    # less CPU per chunk than httpx2 (bench/read_path.py); both refuse redirects and pin
    # checked addresses for custom endpoints (providers/http_transport.py).
    PROVIDER_HTTP_TRANSPORT: Literal["aiohttp", "httpx"] = "aiohttp"
    # A streamed answer's body is read at most once per this many milliseconds: events that
    # arrive meanwhile are read in one go (one wake-up instead of several per stream). A
    # Discord message is edited about once a second at best, so this never shows; 0 reads
    # every event as it arrives (providers/streaming.py, bench/load.py).
    PROVIDER_READ_INTERVAL_MS: int = Field(default=250, ge=0, le=1000)
    # The event loop: uvloop costs less CPU per network read than asyncio's own.
    EVENT_LOOP: Literal["uvloop", "asyncio"] = "uvloop"
    METRICS_PORT: int | None = Field(default=None, ge=1, le=65535)
    # Where /metrics and /healthz listen: this machine only unless opened on purpose
    # (docker-compose.yml sets 0.0.0.0, so a Prometheus on the compose network can scrape;
    # it publishes no port on the host).
    METRICS_HOST: str = Field(default="127.0.0.1", min_length=1)
    SHARD_COUNT: int | None = Field(default=None, ge=1)
    # Shards from a process index: SHARD_PROCESSES processes, this one PROCESS_INDEX (unset:
    # the host name's trailing ordinal, as a Kubernetes StatefulSet names its pods, bot-2 → 2)
    # serves the shards i with i % SHARD_PROCESSES == PROCESS_INDEX. Derived here, so SHARD_IDS
    # reads the same everywhere (the global budget's share, the pool, one process syncing).
    SHARD_PROCESSES: int | None = Field(default=None, ge=1, le=1024, validate_default=True)
    PROCESS_INDEX: int | None = Field(default=None, ge=0, validate_default=True)
    SHARD_IDS: Annotated[list[int], NoDecode] = Field(default_factory=list, validate_default=True)
    # PgBouncer in transaction mode between the bot and PostgreSQL: asyncpg's statement caches off.
    DATABASE_PGBOUNCER: bool = False
    # The servers (ids) the bot serves; it leaves any other it is in or joins. Unset: every
    # server that adds it (a public application then lets strangers spend the default route).
    ALLOWED_SERVERS: Annotated[frozenset[int], Field(max_length=1000), NoDecode] = frozenset()

    @field_validator("SHARD_PROCESSES", "PROCESS_INDEX", mode="before")
    @classmethod
    def _blank_shard_setting(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("DATABASE_PGBOUNCER", mode="before")
    @classmethod
    def _pgbouncer_switch(cls, value: object) -> object:
        return cls._switch(value)

    @field_validator("SHARD_PROCESSES")
    @classmethod
    def _shard_processes(cls, value: int | None, info: ValidationInfo) -> int | None:
        count = info.data.get("SHARD_COUNT")
        if value is None or "SHARD_COUNT" not in info.data:
            return value
        if count is None:
            raise ValueError("needs SHARD_COUNT, the number of shards across all processes "
                             f"(e.g. SHARD_COUNT={value} or more)")
        if value > count:
            raise ValueError(f"{value} processes for SHARD_COUNT={count} shards would leave a process "
                             "without a shard; raise SHARD_COUNT or lower SHARD_PROCESSES")
        return value

    @field_validator("PROCESS_INDEX")
    @classmethod
    def _process_index(cls, value: int | None, info: ValidationInfo) -> int | None:
        processes = info.data.get("SHARD_PROCESSES")
        if processes is None:
            if value is not None and "SHARD_PROCESSES" in info.data:
                raise ValueError("needs SHARD_PROCESSES, the number of processes sharing the shards")
            return value
        source = ""
        if value is None:
            host = os.environ.get("HOSTNAME") or socket.gethostname()
            ordinal = re.search(r"-(\d+)$", host.split(".")[0])
            if ordinal is None:
                raise ValueError(f"unset, and the host name {host[:60]!r} ends in no ordinal (a StatefulSet "
                                 f"names its pods bot-0, bot-1, ...); set PROCESS_INDEX (0 to {processes - 1})")
            value, source = int(ordinal.group(1)), f" (from the host name {host[:60]!r})"
        if value >= processes:
            raise ValueError(f"{value}{source} is out of range with SHARD_PROCESSES={processes} "
                             f"(0 to {processes - 1})")
        return value

    @field_validator("SHARD_IDS")
    @classmethod
    def _derived_shard_ids(cls, value: list[int], info: ValidationInfo) -> list[int]:
        processes, index = info.data.get("SHARD_PROCESSES"), info.data.get("PROCESS_INDEX")
        count = info.data.get("SHARD_COUNT")
        if processes is None or index is None or count is None:
            return value
        derived = [shard for shard in range(count) if shard % processes == index]
        if value and sorted(value) != derived:
            shown = ",".join(map(str, derived))
            raise ValueError(f"{','.join(map(str, value))} contradicts SHARD_PROCESSES={processes} with "
                             f"PROCESS_INDEX={index} (shards {shown}); unset SHARD_IDS or make them agree")
        return derived

    # Discord REST requests per second for the whole bot token (Discord's global limit, 50
    # unless Discord raised it); processes splitting the shards share it by their shards.
    # 0: no budget here, because DISCORD_API_BASE_URL is a shared REST proxy that enforces it.
    DISCORD_GLOBAL_RATE: int = Field(default=50, ge=0, le=10_000)
    # DISCORD_API_BASE_URL is a shared REST proxy that holds the token's limit for every
    # process: each keeps its priorities as a soft budget at the whole rate (`ProxyBudget`).
    DISCORD_REST_PROXY: bool = False
    # Bounds of one answer (a hostile or broken endpoint cannot hold a reply open or flood a channel).
    MAX_OUTPUT_TOKENS: int = Field(default=4096, ge=1, le=200_000)
    ANSWER_DEADLINE_SECONDS: float = Field(default=300.0, ge=5, le=3600)
    FIRST_TOKEN_DEADLINE_SECONDS: float = Field(default=90.0, ge=1, le=600)
    ANSWER_IDLE_SECONDS: float = Field(default=120.0, ge=1, le=600)
    MAX_MESSAGES_PER_ANSWER: int = Field(default=10, ge=1, le=50)
    MAX_TOOL_CALLS_PER_RESPONSE: int = Field(default=8, ge=1, le=64)
    MAX_REASONING_CHARS: int = Field(default=200_000, ge=1000, le=10_000_000)
    # Answers one member may have streaming at once, across channels and threads.
    MAX_ANSWERS_PER_MEMBER: int = Field(default=2, ge=1, le=20)
    # When the database cannot be reached: answer from the environment default instead of
    # telling the member to try again (off by default: the server's own settings would be skipped).
    DATABASE_DOWN_USES_DEFAULT: bool = False
    # Limits of the operator's default (DEFAULT_TEXT_*) for each member it serves, in DMs
    # and in servers that set up no model of their own, counted across all of them. Server
    # rules never reach DMs, so messages are bounded by default; 0 means no limit, said
    # explicitly (tokens: unset or 0, no limit).
    DEFAULT_MESSAGES_PER_HOUR: int = Field(default=30, ge=0, le=1_000_000)
    DEFAULT_TOKENS_PER_DAY: int | None = Field(default=None, ge=0, le=10**12)
    # Web search for the operator's default route (DMs, and servers that set nothing of
    # their own); a server's managers turn it on for theirs with `/settings web-search`.
    WEB_SEARCH: bool = False
    # Read the links in questions (bot/capabilities/reading/links/): the pages a member names reach the model as
    # text. Off: no question's links are read, whatever a server set (`/settings read-links`
    # turns it off for one server). LINKS_ALLOW_PRIVATE lets those links reach private and
    # loopback addresses (a closed network, tests); apart from ALLOW_PRIVATE_ENDPOINTS,
    # because any member may write a link, and metadata addresses stay refused.
    READ_LINKS: bool = True
    LINKS_ALLOW_PRIVATE: bool = False
    # The reader processes (bot/readers/) that read Word, Excel and PDF files and extract
    # pages' text: how many read at once (2 suits 2 cores), how long one document may take
    # before its process is killed and replaced, each process's memory cap (its address
    # space), and how long a file waits for a free process before its note says the
    # reader was busy.
    READER_PROCESSES: int = Field(default=2, ge=1, le=32)
    READER_SECONDS: float = Field(default=15.0, ge=1, le=300)
    READER_MEMORY_MIB: int = Field(default=512, ge=256, le=16_384)
    READER_WAIT_SECONDS: float = Field(default=10.0, ge=0.1, le=300)

    @field_validator("DEFAULT_MESSAGES_PER_HOUR", mode="before")
    @classmethod
    def _blank_is_the_default_bound(cls, value: object) -> object:
        """Left blank in .env: the default bound, never "no limit" (that is an explicit 0)."""
        return 30 if isinstance(value, str) and not value.strip() else value

    @field_validator("DISCORD_TOKEN", "BOT_ENCRYPTION_KEY", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator(
        "DISCORD_API_BASE_URL", "DISCORD_GATEWAY_URL", "DEFAULT_TEXT_PROVIDER",
        "DEFAULT_TEXT_MODEL", "DEFAULT_TEXT_BASE_URL", "METRICS_PORT", "SHARD_COUNT",
        "DEFAULT_TOKENS_PER_DAY",
        mode="before",
    )
    @classmethod
    def _blank_optional(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("SEARCH_BACKEND", "SEARCH_URL", "SEARCH_API_KEY", mode="before")
    @classmethod
    def _blank_search(cls, value: object) -> object:
        return (value.strip() or None) if isinstance(value, str) else value

    @field_validator("SEARCH_BACKEND", mode="before")
    @classmethod
    def _lower_backend(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value

    @field_validator("SEARCH_URL")
    @classmethod
    def _search_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        backend = info.data.get("SEARCH_BACKEND")
        if value is None:
            if backend == "searxng":
                raise ValueError("SEARCH_BACKEND=searxng needs the SearXNG instance's address "
                                 "(e.g. http://searxng:8080)")
            return None
        if backend is None and "SEARCH_BACKEND" in info.data:
            raise ValueError("set SEARCH_BACKEND (searxng, brave or tavily) too, or leave SEARCH_URL unset")
        allow_private = bool(info.data.get("ALLOW_PRIVATE_ENDPOINTS") or info.data.get("SEARCH_ALLOW_PRIVATE"))
        problem = search_url_problem(value, allow_private=allow_private)
        if problem is not None:
            raise ValueError(problem)
        return value.rstrip("/")

    @field_validator("SEARCH_API_KEY")
    @classmethod
    def _search_key(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        backend = info.data.get("SEARCH_BACKEND")
        if value is None and backend in ("brave", "tavily"):
            raise ValueError(f"SEARCH_BACKEND={backend} needs the service's API key")
        if value is not None and backend is None and "SEARCH_BACKEND" in info.data:
            raise ValueError("set SEARCH_BACKEND (searxng, brave or tavily) too, or leave SEARCH_API_KEY unset")
        return value

    @field_validator("READ_LINKS", "LINKS_ALLOW_PRIVATE", mode="before")
    @classmethod
    def _switch(cls, value: object) -> object:
        """A switch says true or false; anything else names what it takes (not pydantic's
        wording), so the operator's one line says how to fix it."""
        if isinstance(value, str) and value.strip().lower() not in SWITCH_WORDS:
            raise ValueError(f"use true or false (got {value.strip()[:20]!r})")
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("LOG_LEVEL", mode="before")
    @classmethod
    def _upper_level(cls, value: object) -> object:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("PROVIDER_HTTP_TRANSPORT", "EVENT_LOOP", mode="before")
    @classmethod
    def _lower_choice(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("ALLOWED_SERVERS")
    @classmethod
    def _server_ids(cls, value: frozenset[int]) -> frozenset[int]:
        for server in value:
            if not 0 < server < 2**64:
                raise ValueError(f"{server} is not a server id (Developer Mode: right-click the server, Copy Server ID)")
        return value

    @field_validator("DEFAULT_TEXT_API_KEYS", "SHARD_IDS", "ALLOWED_SERVERS", mode="before")
    @classmethod
    def _csv(cls, value: object) -> object:
        return split_csv(value)

    @field_validator("DATABASE_URL")
    @classmethod
    def _database_url(cls, value: str) -> str:
        try:
            url = make_url(value)
        except ArgumentError:
            raise ValueError("not a database URL (expected e.g. sqlite+aiosqlite:///data/bot.sqlite3)") from None
        if url.drivername not in SUPPORTED_DRIVERS:
            raise ValueError(f"driver {url.drivername!r} is not supported; use one of {', '.join(SUPPORTED_DRIVERS)}")
        return value

    @field_validator("BOT_ENCRYPTION_KEY")
    @classmethod
    def _fernet_keys(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None:
            return None
        parts = split_csv(value.get_secret_value())
        if not parts or not all(is_fernet_key(part) for part in parts):  # type: ignore[union-attr]
            raise ValueError(f"not a Fernet key ({MAKE_KEY})")
        return value

    @field_validator("DISCORD_API_BASE_URL", "DEFAULT_TEXT_BASE_URL")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/") if value else value

    @field_validator("DISCORD_GATEWAY_URL")
    @classmethod
    def _ws_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("ws://", "wss://")):
            raise ValueError("must start with ws:// or wss://")
        return value

    @field_validator("DEFAULT_TEXT_PROVIDER")
    @classmethod
    def _provider(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip().lower()
        if value not in KNOWN_PROVIDERS:
            raise ValueError(f"unknown provider {value!r}; use one of {', '.join(KNOWN_PROVIDERS)}")
        return value

    # ---- derived values -------------------------------------------------------------

    @property
    def sqlite_path(self) -> Path | None:
        url = make_url(self.DATABASE_URL)
        if not url.drivername.startswith("sqlite") or url.database in (None, "", ":memory:"):
            return None
        return Path(url.database)

    def default_text_api_keys(self) -> list[str]:
        return [key.get_secret_value() for key in self.DEFAULT_TEXT_API_KEYS]


def default_route_problem(settings: Settings) -> str | None:
    """The one line naming what a partly set default route (DEFAULT_TEXT_*) lacks, or None
    when it is complete or not set at all. `python -m bot` refuses to start on it and
    `python -m bot ask` prints it: the same rules, in one place (`bot.route_problem`)."""
    return EnvironmentRoute("TEXT", "the default route", settings.DEFAULT_TEXT_PROVIDER, settings.DEFAULT_TEXT_MODEL,
                            settings.DEFAULT_TEXT_BASE_URL, bool(settings.DEFAULT_TEXT_API_KEYS)).problem()


def load_settings(**overrides: object) -> Settings:
    """Read settings; raise SettingsError with one line naming the first bad variable."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        first = exc.errors()[0]
        name = str(first["loc"][0]) if first.get("loc") else "settings"
        message = first.get("msg", "invalid value")
        message = message.removeprefix("Value error, ")
        raise SettingsError(f"Invalid setting {name}: {message}") from None
