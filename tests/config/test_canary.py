"""A canary key entered through every path never appears in plain text anywhere: not in
the database (raw SQLite file bytes, every row on PostgreSQL), not in any log record at
DEBUG (discord.py's gateway log included), not in any reply or request the bot sent."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

from cryptography.fernet import Fernet
from sqlalchemy import select, text

from bot import repo
from bot.db.base import Base
from bot.db.models import ServerApiKey
from bot.vault import Vault
from tests.support.drive_commands import (
    NO_PERMISSIONS,
    command,
    group,
    member,
    opt,
    sub,
    submit_modal,
)
from tests.support.drive_discord_client import running_bot

SERVER_CANARY = "sk-CANARY-server-7e57c4a1"
PERSONAL_CANARY = "sk-CANARY-personal-b0b5ec"
ROOT = Path(__file__).resolve().parents[2]


async def test_canary_keys_never_in_plain_text(fake_discord, bot_factory, caplog):
    caplog.set_level(logging.DEBUG)
    fake = fake_discord
    bot = bot_factory()
    erin = member(fake, "erin")
    async with running_bot(fake, bot) as run:
        form = await command(run, fake, "keys", sub("add", opt("provider", "zai")))
        await submit_modal(run, fake, form, SERVER_CANARY)
        form = await command(run, fake, "personal", group("key", sub("set")), user=erin, permissions=NO_PERMISSIONS)
        await submit_modal(run, fake, form, PERSONAL_CANARY, user=erin, permissions=NO_PERMISSIONS)
        # the same keys again (refused as duplicates, or replaced) and every view of them
        form = await command(run, fake, "keys", sub("add", opt("provider", "zai")))
        await submit_modal(run, fake, form, SERVER_CANARY)
        await command(run, fake, "personal", sub("model", opt("provider", "zai"), opt("model", "glm")),
                      user=erin, permissions=NO_PERMISSIONS)
        await command(run, fake, "personal", sub("override", opt("enabled", True)), user=erin,
                      permissions=NO_PERMISSIONS)
        await command(run, fake, "keys", sub("list"))
        await command(run, fake, "status")
        await command(run, fake, "status", user=erin, permissions=NO_PERMISSIONS)
        async with bot.sessions() as session:
            assert len((await session.scalars(select(ServerApiKey))).all()) == 1
        await bot.engine.dispose()  # flush everything to the file

    sent = [str(r.body) for r in fake.requests] + [m.content for m in fake.messages.values()]
    raw = b"".join(p.read_bytes() for p in Path(bot_factory.database_dir).glob("bot.sqlite3*"))
    for canary in (SERVER_CANARY, PERSONAL_CANARY):
        assert canary.encode() not in raw
        assert canary not in caplog.text
        assert not any(canary in body for body in sent)
    # the masked forms did reach the replies, so the views above really ran
    assert any("\u2026c4a1" in body for body in sent) and any("\u2026b5ec" in body for body in sent)
    # and the database holds what decrypts back to the canaries
    vault = Vault([bot_factory.encryption_key.encode()])
    async with bot.sessions() as session:
        token = await session.scalar(select(ServerApiKey.encrypted_key))
    assert vault.decrypt(token) == SERVER_CANARY


async def test_no_row_on_either_backend_holds_the_key_in_plain_text(sessions, vault):
    async with sessions() as s, s.begin():
        await repo.add_server_key(s, vault, 5, "openai", SERVER_CANARY, label="canary")
        await repo.set_personal_key(s, vault, 9, None, PERSONAL_CANARY)
    async with sessions() as s:
        dumped = []
        for table in Base.metadata.sorted_tables:
            rows = (await s.execute(text(f"SELECT * FROM {table.name}"))).all()
            dumped += [repr(tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)) for row in rows]
    blob = "\n".join(dumped)
    assert "canary" in blob  # the label is there, so the dump is real
    assert SERVER_CANARY not in blob and PERSONAL_CANARY not in blob


async def test_rotate_cli_re_encrypts_under_the_new_key(tmp_path):
    from bot import migrate
    from bot.db.engine import create_engine, session_factory

    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    url = f"sqlite+aiosqlite:///{tmp_path}/cli.sqlite3"
    engine = create_engine(url)
    await migrate.upgrade(engine)
    async with session_factory(engine)() as s, s.begin():
        await repo.add_server_key(s, Vault([old.encode()]), 1, "openai", SERVER_CANARY)
    await engine.dispose()

    env = {"DATABASE_URL": url, "BOT_ENCRYPTION_KEY": f"{new},{old}", "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-m", "bot.vault", "rotate"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=60,
                            )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "re-encrypted 1 stored key(s) under the newest BOT_ENCRYPTION_KEY"
    assert SERVER_CANARY not in result.stdout + result.stderr

    engine = create_engine(url)
    async with session_factory(engine)() as s:
        token = await s.scalar(select(ServerApiKey.encrypted_key))
    await engine.dispose()
    assert Vault([new.encode()]).decrypt(token) == SERVER_CANARY

    bad = subprocess.run([sys.executable, "-m", "bot.vault", "rotate"], cwd=tmp_path,
                         env={**env, "BOT_ENCRYPTION_KEY": Fernet.generate_key().decode()},
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "a stored API key cannot be" in bad.stderr
