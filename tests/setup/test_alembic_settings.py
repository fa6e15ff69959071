"""The alembic CLI migrates the database the bot uses: DATABASE_URL from `.env` (or the
environment), read by bot/settings.py as `python -m bot.migrate` reads it."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def alembic(workdir: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    return subprocess.run([sys.executable, "-m", "alembic", "-c", str(ROOT / "alembic.ini"), *args],
                          cwd=workdir, capture_output=True, text=True, timeout=120,
                          env={**clean, "PYTHONPATH": str(ROOT), **(env or {})})


def tables(database: Path) -> set[str]:
    with sqlite3.connect(database) as conn:
        return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_alembic_upgrade_head_migrates_the_database_named_in_dot_env(tmp_path: Path) -> None:
    database = tmp_path / "chosen" / "bot.sqlite3"
    (tmp_path / ".env").write_text(f"DATABASE_URL=sqlite+aiosqlite:///{database}\n")
    result = alembic(tmp_path, "upgrade", "head")
    assert result.returncode == 0, result.stderr
    assert {"alembic_version", "server_api_keys"} <= tables(database)
    assert not (tmp_path / "data").exists()  # not the default data/bot.sqlite3


def test_the_environment_wins_over_dot_env_as_for_the_bot(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(f"DATABASE_URL=sqlite+aiosqlite:///{tmp_path / 'from_file.sqlite3'}\n")
    database = tmp_path / "from_env.sqlite3"
    result = alembic(tmp_path, "upgrade", "head", env={"DATABASE_URL": f"sqlite+aiosqlite:///{database}"})
    assert result.returncode == 0, result.stderr
    assert "alembic_version" in tables(database) and not (tmp_path / "from_file.sqlite3").exists()


def test_a_bad_database_url_is_one_line(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("DATABASE_URL=mysql://localhost/x\n")
    result = alembic(tmp_path, "upgrade", "head")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [result.stderr.strip()] and "DATABASE_URL" in result.stderr
