"""Apply the alembic migrations, from a shell (`python -m bot.migrate`) or from inside
the running event loop on start (testing notes §6: the connection is handed to env.py,
so alembic never calls asyncio.run inside a loop)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.db.engine import create_engine
from bot.settings import SettingsError, load_settings

ROOT = Path(__file__).resolve().parents[1]


def alembic_config() -> Config:
    cfg = Config(str(ROOT / "alembic.ini"))
    cfg.set_main_option("script_location", str(ROOT / "migrations"))
    return cfg


async def _run(engine: AsyncEngine, fn, *args) -> None:
    cfg = alembic_config()
    async with engine.begin() as conn:
        def go(sync_conn) -> None:
            cfg.attributes["connection"] = sync_conn
            fn(cfg, *args)

        await conn.run_sync(go)


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    await _run(engine, command.upgrade, revision)


async def downgrade(engine: AsyncEngine, revision: str = "base") -> None:
    await _run(engine, command.downgrade, revision)


async def _main(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        await upgrade(engine)
    finally:
        await engine.dispose()


def main() -> int:
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        return 2
    asyncio.run(_main(settings.DATABASE_URL))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
