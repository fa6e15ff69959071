"""The key vault: API keys are Fernet-encrypted at rest and only ever shown masked.

`BOT_ENCRYPTION_KEY` may hold several keys, newest first (MultiFernet): the first one
encrypts, every one decrypts, so an operator rotates by prepending a new key, running
`python -m bot.vault rotate` (re-encrypts every stored key under the newest one), and
then dropping the old key. No method here puts a key or a token into an exception or a
log line.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import sys
from collections.abc import Sequence

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import PersonalConfig, ServerApiKey
from bot.settings import Settings, SettingsError, load_settings, resolve_encryption_keys

log = logging.getLogger(__name__)

MASK_PREFIX = "\u2026"  # "…"


class VaultError(Exception):
    """A stored key cannot be decrypted with the configured keys (the text names no secret)."""


def last4(secret: str) -> str:
    """The visible tail kept beside the ciphertext for masked display."""
    return secret[-4:]


def mask(secret: str) -> str:
    """`…abcd`: the only form in which a key is ever shown again after entry."""
    return MASK_PREFIX + last4(secret)


def masked_tail(tail: str | None) -> str:
    """Mask from a stored `last4` column."""
    return MASK_PREFIX + (tail or "")


def fingerprint(secret: str) -> str:
    """A one-way id for an environment key, so its health can be shared in the database."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class Vault:
    """Encrypts with the newest configured key and decrypts with any of them."""

    def __init__(self, keys: Sequence[bytes]) -> None:
        if not keys:
            raise ValueError("the vault needs at least one Fernet key")
        self._fernet = MultiFernet([Fernet(key) for key in keys])

    @classmethod
    def from_settings(cls, settings: Settings) -> Vault:
        return cls(resolve_encryption_keys(settings))

    def __repr__(self) -> str:
        return "Vault(<keys hidden>)"

    def encrypt(self, secret: str) -> bytes:
        return self._fernet.encrypt(secret.encode("utf-8"))

    def decrypt(self, token: bytes) -> str:
        try:
            return self._fernet.decrypt(bytes(token)).decode("utf-8")
        except InvalidToken:
            raise VaultError(
                "a stored API key cannot be decrypted with BOT_ENCRYPTION_KEY "
                "(was the key that encrypted it removed?)"
            ) from None

    def rotate(self, token: bytes) -> bytes:
        try:
            return self._fernet.rotate(bytes(token))
        except InvalidToken:
            raise VaultError(
                "a stored API key cannot be re-encrypted: none of the configured keys decrypts it"
            ) from None


async def rotate_all(session: AsyncSession, vault: Vault) -> int:
    """Re-encrypt every stored key under the newest key; returns how many were rewritten.

    The caller commits, so a failure part-way leaves every row as it was.
    """
    count = 0
    for row in (await session.scalars(select(ServerApiKey))).all():
        row.encrypted_key = vault.rotate(row.encrypted_key)
        count += 1
    personal = select(PersonalConfig).where(PersonalConfig.encrypted_key.is_not(None))
    for row in (await session.scalars(personal)).all():
        row.encrypted_key = vault.rotate(row.encrypted_key)  # type: ignore[arg-type]
        count += 1
    await session.flush()
    log.info("re-encrypted %d stored key(s) under the newest encryption key", count)
    return count


async def _rotate_cli(settings: Settings) -> int:
    from bot.db.engine import create_engine, session_factory

    engine = create_engine(settings.DATABASE_URL)
    try:
        vault = Vault.from_settings(settings)
        async with session_factory(engine)() as session, session.begin():
            return await rotate_all(session, vault)
    finally:
        await engine.dispose()


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m bot.vault rotate`."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args != ["rotate"]:
        print("usage: python -m bot.vault rotate", file=sys.stderr)
        return 2
    try:
        count = asyncio.run(_rotate_cli(load_settings()))
    except (SettingsError, VaultError) as exc:
        print(exc, file=sys.stderr)
        return 2
    print(f"re-encrypted {count} stored key(s) under the newest BOT_ENCRYPTION_KEY")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


class ModalSecretFilter(logging.Filter):
    """Redacts the typed values of modal submits from discord.py's gateway debug log.

    At DEBUG, discord.py logs every received gateway event verbatim, and a modal submit
    (INTERACTION_CREATE type 5) carries the API key a member typed; this filter rewrites
    such records before any handler sees them.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(_is_modal_submit(arg) for arg in record.args):
            record.args = tuple(_redacted(arg) if _is_modal_submit(arg) else arg for arg in record.args)
        return True


def _is_modal_submit(value: object) -> bool:
    return (isinstance(value, dict) and value.get("t") == "INTERACTION_CREATE"
            and isinstance(value.get("d"), dict) and value["d"].get("type") == 5)


def _redacted(value: object) -> object:
    if isinstance(value, dict):
        return {k: ("<redacted>" if k == "value" else _redacted(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    return value


def install_log_redaction() -> None:
    """Attach the modal filter to discord.py's gateway logger once per process."""
    gateway = logging.getLogger("discord.gateway")
    if not any(isinstance(f, ModalSecretFilter) for f in gateway.filters):
        gateway.addFilter(ModalSecretFilter())
