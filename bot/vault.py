"""The key vault: API keys are Fernet-encrypted at rest and only ever shown masked.

`BOT_ENCRYPTION_KEY` may hold several keys, newest first (MultiFernet): the first one
encrypts, every one decrypts, so an operator rotates by prepending a new key, running
`python -m bot.vault rotate` (re-encrypts every stored key under the newest one), and
then dropping the old key. No method here puts a key or a token into an exception or a
log line.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import logging
import sys
from collections.abc import Sequence

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from bot.db.models import PersonalConfig, ServerApiKey
from bot.encryption_key import KEY_FILE_NAME, resolve_encryption_keys
from bot.settings import Settings, SettingsError, load_settings

log = logging.getLogger(__name__)

MASK_PREFIX = "\u2026"  # "…"
MAX_VISIBLE = 4
FINGERPRINT_CONTEXT = b"llm-discord-bot stored API key fingerprint v1"


class VaultError(Exception):
    """A stored key cannot be decrypted with the configured keys (the text names no secret)."""


def last4(secret: str) -> str:
    """The visible tail kept beside the ciphertext: at most 4 characters and never more
    than a quarter of the key (none of a key of 4 or fewer), so a short key is not half
    given away by its mask."""
    visible = 0 if len(secret) <= MAX_VISIBLE else min(MAX_VISIBLE, len(secret) // 4)
    return secret[len(secret) - visible:]


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
        newest = base64.urlsafe_b64decode(keys[0])
        self._fingerprint_key = hmac.new(newest, FINGERPRINT_CONTEXT, hashlib.sha256).digest()

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

    def try_decrypt(self, token: bytes) -> str | None:
        """The key, or None when no configured key decrypts it (one bad row must not
        make every other key unusable)."""
        try:
            return self.decrypt(token)
        except VaultError:
            return None

    def key_fingerprint(self, secret: str) -> str:
        """Keyed one-way id of a stored key, so the database can refuse the same key twice.

        Keyed with the newest encryption key: a plain hash beside the ciphertext would let
        anyone holding only a database dump test guesses of short keys.
        """
        return hmac.new(self._fingerprint_key, secret.encode("utf-8"), hashlib.sha256).hexdigest()



async def rotate_all(session: AsyncSession, vault: Vault) -> int:
    """Re-encrypt every stored key under the newest key; returns how many were rewritten.

    Also refreshes what is derived from the key: the fingerprint (keyed with the newest
    encryption key) and the masked tail (rows written before masks were limited to a
    quarter of the key). The caller commits, so a failure part-way leaves every row as it was.
    """
    count = 0
    seen: set[tuple[int, str, str]] = set()
    # Cleared first, so no row's new fingerprint meets another's old one mid-flush.
    await session.execute(update(ServerApiKey).values(key_fingerprint=None)
                          .execution_options(synchronize_session=False))
    rows = await session.scalars(select(ServerApiKey).order_by(ServerApiKey.id)
                                 .execution_options(populate_existing=True))
    for row in rows.all():
        secret = vault.decrypt(row.encrypted_key)
        key_print = vault.key_fingerprint(secret)
        # A pool may hold one key twice from before the database refused it: the later
        # copy keeps no fingerprint rather than break the rotation.
        duplicate = (row.guild_id, row.provider, key_print) in seen
        seen.add((row.guild_id, row.provider, key_print))
        row.key_fingerprint = None if duplicate else key_print
        row.encrypted_key, row.last4 = vault.encrypt(secret), last4(secret)
        count += 1
    personal = select(PersonalConfig).where(PersonalConfig.encrypted_key.is_not(None))
    for row in (await session.scalars(personal)).all():
        secret = vault.decrypt(row.encrypted_key)  # type: ignore[arg-type]
        row.encrypted_key, row.last4 = vault.encrypt(secret), last4(secret)
        count += 1
    await session.flush()
    log.info("re-encrypted %d stored key(s) under the newest encryption key", count)
    return count


async def stored_key_count(engine: AsyncEngine) -> int:
    """How many API keys the database holds encrypted (server pools and personal keys)."""
    async with engine.connect() as conn:
        pooled = await conn.scalar(select(func.count()).select_from(ServerApiKey))
        personal = await conn.scalar(select(func.count()).select_from(PersonalConfig)
                                     .where(PersonalConfig.encrypted_key.is_not(None)))
    return int(pooled or 0) + int(personal or 0)


async def refuse_lost_key_file(settings: Settings, engine: AsyncEngine) -> None:
    """Stop with one line when the generated key file is gone but keys encrypted with it are
    stored: a new key (what `resolve_encryption_keys` would make) would leave every one of
    them unreadable, and the file may only be missing from a restore or a moved folder.
    Call after the migrations, so the tables exist."""
    path = settings.sqlite_path
    if settings.BOT_ENCRYPTION_KEY is not None or path is None:
        return
    key_file = path.parent / KEY_FILE_NAME
    if key_file.exists():
        return
    count = await stored_key_count(engine)
    if count:
        raise SettingsError(
            f"Encryption key file {key_file} is missing but the database holds {count} API key(s) "
            "encrypted with it: restore the file from the backup taken with the database, or set "
            "BOT_ENCRYPTION_KEY to that key (a new key would leave them unreadable)."
        )


async def _rotate_cli(settings: Settings) -> int:
    from bot.db.engine import create_engine, session_factory

    engine = create_engine(settings.DATABASE_URL)
    try:
        await refuse_lost_key_file(settings, engine)
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
