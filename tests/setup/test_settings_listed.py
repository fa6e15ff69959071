"""Every setting `bot/settings.py` reads is listed in `.env.example` and in the settings
reference's tables (docs/settings.md), and nothing else is listed: adding a setting means
adding it to both."""

from __future__ import annotations

import re
from pathlib import Path

from bot.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
ENV_EXAMPLE = ROOT / ".env.example"
COMPOSE_FILE = ROOT / "docker-compose.yml"
NAME = re.compile(r"^#?\s*([A-Z][A-Z0-9_]+)=", re.M)


def settings_read() -> set[str]:
    return set(Settings.model_fields)


def env_example_names() -> set[str]:
    """`NAME=` lines, set or commented out (a commented line shows the default)."""
    return set(NAME.findall(ENV_EXAMPLE.read_text()))


def reference_table_names() -> set[str]:
    """The names in the first column of the settings reference's tables (`| setting | type | …`)."""
    lines = (ROOT / "docs" / "settings.md").read_text().splitlines()
    names: set[str] = set()
    for start in (i for i, line in enumerate(lines) if line.startswith("| setting |")):
        for line in lines[start + 2:]:
            if not line.startswith("|"):
                break
            names |= set(re.findall(r"`([A-Z][A-Z0-9_]+)`", line.split("|")[1]))
    return names


def test_env_example_lists_every_setting() -> None:
    missing = settings_read() - env_example_names()
    assert not missing, f"add these to .env.example: {sorted(missing)}"


def test_env_example_lists_nothing_the_bot_or_compose_does_not_read() -> None:
    """Its first line says every name is read; the POSTGRES_* ones are compose's own."""
    extra = env_example_names() - settings_read()
    compose = COMPOSE_FILE.read_text()
    assert all(name.startswith("POSTGRES_") and f"${{{name}" in compose for name in extra), sorted(extra)
    assert "bot/settings.py" in ENV_EXAMPLE.read_text().splitlines()[0]


def test_the_reference_tables_name_every_setting_and_only_those() -> None:
    table = reference_table_names()
    assert not settings_read() - table, f"add these to docs/settings.md: {sorted(settings_read() - table)}"
    assert not table - settings_read(), f"not settings: {sorted(table - settings_read())}"


def test_the_running_guide_covers_running_it_for_good() -> None:
    """Backups (the database and the key together), upgrades, key rotation and logs."""
    guide = (ROOT / "docs" / "running.md").read_text()
    section = guide[guide.index("## Running it for good"):]
    for needed in ("**Backups.**", "**Upgrades.**", "**Key rotation.**", "**Logs.**",
                   "python -m bot.vault rotate", "docker compose up -d --build", "data/encryption.key",
                   "pg_dump", "Compose 2.24", "**Metrics.**", "METRICS_HOST", "127.0.0.1"):
        assert needed in section, needed
    backups = section[section.index("**Backups.**"):section.index("**Upgrades.**")]
    assert "together" in backups and "BOT_ENCRYPTION_KEY" in backups
