"""Alembic environment: async engines, batch mode on SQLite, and a connection handed in
by the bot (so migrations run inside its event loop)."""

import asyncio
import sys
from logging.config import fileConfig

from alembic import context

from bot.db import models  # noqa: F401 - registers the tables on the metadata
from bot.db.base import Base
from bot.db.engine import create_engine
from bot.settings import SettingsError, load_settings

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    """The database the bot and `python -m bot.migrate` use (DATABASE_URL from the
    environment or .env, read by bot/settings.py), so the alembic CLI never migrates
    another one; `-x url=...` names one explicitly."""
    given = context.get_x_argument(as_dictionary=True).get("url")
    if given:
        return given
    try:
        return load_settings().DATABASE_URL
    except SettingsError as exc:  # one line naming the setting, as the bot says it
        print(exc, file=sys.stderr)
        raise SystemExit(2) from None


def do_run_migrations(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        on_version_apply=config.attributes.get("on_version_apply"),
    )
    with context.begin_transaction():
        context.run_migrations()


async def run_async_migrations() -> None:
    # The alembic CLI takes the same lock as the bot's own start-up migration.
    from bot.migrate import migration_lock

    engine = create_engine(_url())
    try:
        async with engine.connect() as connection, migration_lock(connection):
            await connection.run_sync(do_run_migrations)
            await connection.commit()
    finally:
        await engine.dispose()


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True,
                      render_as_batch=_url().startswith("sqlite"))
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if context.is_offline_mode():
    run_migrations_offline()
elif connection is not None:
    do_run_migrations(connection)
else:
    # Only the alembic CLI gets here; it may configure logging without muting the bot's.
    if config.config_file_name is not None:
        fileConfig(config.config_file_name, disable_existing_loggers=False)
    asyncio.run(run_async_migrations())
