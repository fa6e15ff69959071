from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from bot.encryption_key import resolve_encryption_keys
from bot.repo.usage import Limits
from bot.settings import SettingsError, load_settings
from bot.usage.limits import operator_limits

ROOT = Path(__file__).resolve().parents[1]
SETTING_NAMES = [
    "DISCORD_TOKEN", "DATABASE_URL", "BOT_ENCRYPTION_KEY", "DISCORD_API_BASE_URL", "DISCORD_GATEWAY_URL",
    "DEFAULT_TEXT_PROVIDER", "DEFAULT_TEXT_MODEL", "DEFAULT_TEXT_BASE_URL", "DEFAULT_TEXT_API_KEYS",
    "LOG_LEVEL", "METRICS_PORT", "SHARD_COUNT", "SHARD_IDS", "ALLOW_PRIVATE_ENDPOINTS",
    "READER_PROCESSES", "READER_SECONDS", "READER_MEMORY_MIB", "READER_WAIT_SECONDS",
]


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for name in SETTING_NAMES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env
    return monkeypatch


def test_defaults(clean_env):
    s = load_settings()
    assert s.DATABASE_URL == "sqlite+aiosqlite:///data/bot.sqlite3"
    assert s.DISCORD_TOKEN is None
    assert s.LOG_LEVEL == "INFO"
    assert s.default_text_api_keys() == []
    assert (s.READER_PROCESSES, s.READER_SECONDS, s.READER_MEMORY_MIB, s.READER_WAIT_SECONDS) == (2, 15.0, 512, 10.0)


def test_the_operators_default_is_bounded_per_member_unless_0_is_said(clean_env):
    """DMs spend the operator's keys and server rules never reach them: 30 messages an
    hour per member unless set, blank is that default, and only an explicit 0 lifts it."""
    assert operator_limits(load_settings().DEFAULT_MESSAGES_PER_HOUR, None) == Limits(messages_per_hour=30)
    clean_env.setenv("DEFAULT_MESSAGES_PER_HOUR", " ")
    assert load_settings().DEFAULT_MESSAGES_PER_HOUR == 30
    clean_env.setenv("DEFAULT_MESSAGES_PER_HOUR", "0")
    clean_env.setenv("DEFAULT_TOKENS_PER_DAY", "0")
    lifted = load_settings()
    assert operator_limits(lifted.DEFAULT_MESSAGES_PER_HOUR, lifted.DEFAULT_TOKENS_PER_DAY) == Limits()


def test_key_pool_is_comma_separated_and_secret(clean_env):
    clean_env.setenv("DEFAULT_TEXT_API_KEYS", "sk-one, sk-two,,")
    clean_env.setenv("DEFAULT_TEXT_PROVIDER", "OpenRouter")
    s = load_settings()
    assert s.default_text_api_keys() == ["sk-one", "sk-two"]
    assert s.DEFAULT_TEXT_PROVIDER == "openrouter"
    assert "sk-one" not in repr(s)


def test_env_file_is_read(clean_env, tmp_path):
    (tmp_path / ".env").write_text("DISCORD_TOKEN=abc\nDEFAULT_TEXT_MODEL=gpt-x\n")
    s = load_settings()
    assert s.DISCORD_TOKEN.get_secret_value() == "abc"
    assert s.DEFAULT_TEXT_MODEL == "gpt-x"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("LOG_LEVEL", "LOUD"),
        ("METRICS_PORT", "99999"),
        ("METRICS_PORT", "abc"),
        ("READER_PROCESSES", "0"),
        ("READER_PROCESSES", "many"),
        ("READER_SECONDS", "0.5"),
        ("READER_MEMORY_MIB", "64"),
        ("READER_MEMORY_MIB", "20000"),
        ("READER_WAIT_SECONDS", "0"),
        ("DATABASE_URL", "mysql://localhost/x"),
        ("DATABASE_URL", "::::"),
        ("BOT_ENCRYPTION_KEY", "not-a-key"),
        ("DEFAULT_TEXT_PROVIDER", "skynet"),
        ("DISCORD_API_BASE_URL", "ftp://x"),
        ("DISCORD_GATEWAY_URL", "http://x"),
        ("SHARD_IDS", "1,x"),
        ("DEFAULT_MESSAGES_PER_HOUR", "-1"),
        ("DEFAULT_MESSAGES_PER_HOUR", "many"),
        ("DEFAULT_TOKENS_PER_DAY", "-5"),
    ],
)
def test_bad_value_names_the_variable_in_one_line(clean_env, name, value):
    clean_env.setenv(name, value)
    with pytest.raises(SettingsError) as info:
        load_settings()
    message = str(info.value)
    assert name in message and "\n" not in message


def test_embedded_key_generated_once_with_0600(clean_env, tmp_path):
    clean_env.setenv("DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path}/db/bot.sqlite3")
    s = load_settings()
    first = resolve_encryption_keys(s)
    key_file = tmp_path / "db" / "encryption.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert resolve_encryption_keys(s) == first
    Fernet(first[0])


def test_key_required_off_the_embedded_database(clean_env):
    clean_env.setenv("DATABASE_URL", "postgresql+asyncpg://u@h/db")
    with pytest.raises(SettingsError, match="BOT_ENCRYPTION_KEY"):
        resolve_encryption_keys(load_settings())
    key = Fernet.generate_key().decode()
    old = Fernet.generate_key().decode()
    clean_env.setenv("BOT_ENCRYPTION_KEY", f"{key},{old}")
    assert resolve_encryption_keys(load_settings()) == [key.encode(), old.encode()]


def _run_bot(tmp_path, extra_env):
    env = {k: v for k, v in os.environ.items() if k not in SETTING_NAMES}
    env.update(extra_env)
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "bot"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)


def test_python_m_bot_without_token_prints_one_line_and_exits_2(tmp_path):
    result = _run_bot(tmp_path, {})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "DISCORD_TOKEN" in lines[0] and ".env" in lines[0]


def test_python_m_bot_bad_setting_no_traceback(tmp_path):
    result = _run_bot(tmp_path, {"DISCORD_TOKEN": "x", "LOG_LEVEL": "LOUD"})
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert "LOG_LEVEL" in result.stderr


# ---- the encryption key file and BOT_ENCRYPTION_KEY, refused at start -----------------------

def _start_with_key_file(tmp_path, content: bytes, mode: int, extra_env=None):
    data = tmp_path / "data"
    data.mkdir()
    key_file = data / "encryption.key"
    key_file.write_bytes(content)
    key_file.chmod(mode)
    env = {"DISCORD_TOKEN": "x", "DATABASE_URL": "sqlite+aiosqlite:///data/bot.sqlite3",
           # if the key were accepted the bot would try to log in here and fail loudly
           "DISCORD_API_BASE_URL": "http://127.0.0.1:9", **(extra_env or {})}
    return key_file, _run_bot(tmp_path, env)


def _one_line(result) -> str:
    assert result.returncode == 2, result.stderr[-500:]
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize("content", [b"not a fernet key\n", b"", b"A" * 44 + b"\n"])
def test_corrupt_key_file_refused_at_start_in_one_line(tmp_path, content):
    key_file, result = _start_with_key_file(tmp_path, content, 0o600)
    line = _one_line(result)
    assert "data/encryption.key" in line and "BOT_ENCRYPTION_KEY" in line
    assert key_file.read_bytes() == content  # never replaced: stored keys may depend on it


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_key_file_open_to_others_refused_at_start_in_one_line(tmp_path, mode):
    key_file, result = _start_with_key_file(tmp_path, Fernet.generate_key() + b"\n", mode)
    line = _one_line(result)
    assert "data/encryption.key" in line and "chmod 600" in line
    assert Fernet.generate_key().decode() not in line


def test_key_file_refusals_from_resolve_encryption_keys(clean_env, tmp_path):
    clean_env.setenv("DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path}/db/bot.sqlite3")
    (tmp_path / "db").mkdir()
    key_file = tmp_path / "db" / "encryption.key"
    key = Fernet.generate_key()
    key_file.write_bytes(key + b"\n")
    key_file.chmod(0o600)
    assert resolve_encryption_keys(load_settings()) == [key]
    key_file.chmod(0o640)
    with pytest.raises(SettingsError, match="chmod 600"):
        resolve_encryption_keys(load_settings())
    key_file.chmod(0o600)
    key_file.write_bytes(key[:-4] + b"\n")
    with pytest.raises(SettingsError, match="not a valid Fernet key"):
        resolve_encryption_keys(load_settings())


@pytest.mark.parametrize("value", ["not-a-key", ",", " , ,", "{good},short"])
def test_bad_bot_encryption_key_refused_at_start_in_one_line(tmp_path, value):
    good = Fernet.generate_key().decode()
    result = _run_bot(tmp_path, {"DISCORD_TOKEN": "x", "BOT_ENCRYPTION_KEY": value.format(good=good),
                                 "DISCORD_API_BASE_URL": "http://127.0.0.1:9"})
    line = _one_line(result)
    assert "BOT_ENCRYPTION_KEY" in line and good not in line
