"""Alembic environment: async engines, batch mode on SQLite, and a connection handed in
by the bot (so migrations run inside its event loop)."""

import asyncio
import os
from logging.config import fileConfig

from alembic import context

from bot.db import models  # noqa: F401 - registers the tables on the metadata
from bot.db.base import Base
from bot.db.engine import create_engine

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    return os.environ.get("DATABASE_URL") or config.get_main_option("sqlalchemy.url")


def do_run_migrations(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
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
