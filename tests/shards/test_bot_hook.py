"""The bot's `before_identify_hook`: on PostgreSQL it takes the bucket's turn through the
database; on SQLite discord.py's own spacing stays; `max_concurrency` comes from
`/gateway/bot` (discord.py's `fetch_session_start_limits`), one bucket when unread."""

from __future__ import annotations

from cryptography.fernet import Fernet
from discord.shard import SessionStartLimits
from sqlalchemy import select

from bot import migrate
from bot.app import LLMBot
from bot.db.models_processes import IdentifyTurn
from bot.load.identify import read_max_concurrency
from bot.settings import load_settings
from tests.support.env_postgres import POSTGRES_URL, postgres_schema


async def test_on_postgresql_the_hook_takes_its_turn_in_the_database() -> None:
    async with postgres_schema() as make:
        engine = make()
        await migrate.upgrade(engine)
        settings = load_settings(_env_file=None, DATABASE_URL=POSTGRES_URL,
                                 BOT_ENCRYPTION_KEY=Fernet.generate_key().decode())
        bot = LLMBot(settings, engine=engine)
        assert bot.identify_gate is not None
        await bot.before_identify_hook(0, initial=True)
        assert bot.identify_concurrency == 1  # not logged in: /gateway/bot unread, one bucket
        async with engine.connect() as conn:
            assert (await conn.execute(select(IdentifyTurn.bucket))).scalars().all() == [0]


async def test_on_sqlite_discord_pys_own_spacing_stays(tmp_path) -> None:
    settings = load_settings(_env_file=None, DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/bot.sqlite3")
    bot = LLMBot(settings)
    try:
        assert bot.identify_gate is None
        await bot.before_identify_hook(0, initial=True)  # the first identify: discord.py does not wait
    finally:
        await bot.engine.dispose()


class GatewayBot:
    """What `/gateway/bot` said, through discord.py's own type."""

    def __init__(self, max_concurrency: int | None) -> None:
        self.max_concurrency = max_concurrency

    async def fetch_session_start_limits(self) -> SessionStartLimits:
        if self.max_concurrency is None:
            raise RuntimeError("Discord did not answer")
        return SessionStartLimits(total=1000, remaining=999, reset_after=0, max_concurrency=self.max_concurrency)


async def test_max_concurrency_is_read_from_the_gateway_or_one() -> None:
    assert await read_max_concurrency(GatewayBot(16)) == 16  # type: ignore[arg-type]
    assert await read_max_concurrency(GatewayBot(None)) == 1  # type: ignore[arg-type]
