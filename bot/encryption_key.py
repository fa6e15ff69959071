"""The key that encrypts stored API keys: BOT_ENCRYPTION_KEY, or on the embedded SQLite
default one generated once into a 0600 file beside the database (`make run` needs no
set-up). A key file that is open to other users or damaged stops start-up with one line;
it is never replaced."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from cryptography.fernet import Fernet

from bot.settings import Settings, SettingsError, is_fernet_key, split_csv

KEY_FILE_NAME = "encryption.key"


def resolve_encryption_keys(settings: Settings) -> list[bytes]:
    """The Fernet keys, newest first.

    On the embedded SQLite default a key is generated once into a 0600 file beside the
    database, so `make run` needs no set-up; any other database must be given a key,
    because losing a generated key would make every stored API key unreadable.
    """
    if settings.BOT_ENCRYPTION_KEY is not None:
        return [part.encode() for part in split_csv(settings.BOT_ENCRYPTION_KEY.get_secret_value())]  # type: ignore[union-attr]
    path = settings.sqlite_path
    if path is None:
        raise SettingsError(
            "Invalid setting BOT_ENCRYPTION_KEY: required when DATABASE_URL is not the embedded "
            "SQLite file (set it in the environment or .env)"
        )
    key_file = path.parent / KEY_FILE_NAME
    if key_file.exists():
        return [_read_key_file(key_file)]
    key_file.parent.mkdir(parents=True, exist_ok=True)
    key = Fernet.generate_key()
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
    with os.fdopen(fd, "wb") as handle:
        handle.write(key + b"\n")
    return [key]


def _read_key_file(key_file: Path) -> bytes:
    """The generated key, refused (never replaced: stored keys depend on it) when other
    users may read or change it, or when it is not a Fernet key any more."""
    mode = stat.S_IMODE(key_file.stat().st_mode)
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SettingsError(
            f"Encryption key file {key_file} is open to other users (mode {mode:04o}): "
            f"run chmod 600 {key_file}"
        )
    key = key_file.read_bytes().strip()
    if not is_fernet_key(key):
        raise SettingsError(
            f"Encryption key file {key_file} is not a valid Fernet key: restore it from a backup "
            "(the stored API keys were encrypted with it) or set BOT_ENCRYPTION_KEY to the key "
            "that was used"
        )
    return key
