"""The vault: Fernet at rest, MultiFernet rotation, masking, no secret in error text."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import select

from bot import repo
from bot.db.models import PersonalConfig, ServerApiKey
from bot.vault import Vault, VaultError, mask, rotate_all

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)

CANARY = "sk-CANARY-vault-0000-zz9y"


def test_mask_shows_only_the_tail():
    assert mask(CANARY) == "\u2026zz9y"


@pytest.mark.parametrize(("secret", "shown"), [
    ("abc", ""), ("abcd", ""), ("abcde", "e"), ("abcdefgh", "gh"), ("abcdefghijkl", "jkl"),
    ("abcdefghijklmnop", "mnop"), ("x" * 200 + "tail", "tail"),
])
def test_mask_never_shows_more_than_a_quarter_of_a_key(secret, shown):
    assert mask(secret) == "\u2026" + shown
    assert len(mask(secret)) - 1 <= len(secret) // 4


def test_round_trip_and_old_key_still_decrypts():
    old, new = Fernet.generate_key(), Fernet.generate_key()
    token = Vault([old]).encrypt(CANARY)
    assert CANARY.encode() not in token
    assert Vault([new, old]).decrypt(token) == CANARY
    with pytest.raises(VaultError) as err:
        Vault([new]).decrypt(token)
    assert CANARY not in str(err.value) and token.decode() not in str(err.value)
    assert "keys hidden" in repr(Vault([new]))


async def test_rotate_all_moves_every_key_to_the_newest(sessions):
    old, new = Fernet.generate_key(), Fernet.generate_key()
    before = Vault([old])
    async with sessions() as s, s.begin():
        await repo.add_server_key(s, before, 1, "openai", CANARY)
        await repo.set_personal_key(s, before, 7, None, CANARY + "p")
        await repo.set_personal_model(s, 8, None, "openai", "no-key-row")
    async with sessions() as s, s.begin():
        assert await rotate_all(s, Vault([new, old])) == 2
    only_new = Vault([new])
    async with sessions() as s:
        server_token = await s.scalar(select(ServerApiKey.encrypted_key))
        personal_token = await s.scalar(select(PersonalConfig.encrypted_key).where(PersonalConfig.user_id == 7))
    assert only_new.decrypt(server_token) == CANARY
    assert only_new.decrypt(personal_token) == CANARY + "p"


async def test_rotate_all_with_a_missing_key_changes_nothing(sessions):
    lost = Vault([Fernet.generate_key()])
    async with sessions() as s, s.begin():
        await repo.add_server_key(s, lost, 1, "openai", CANARY)
    async with sessions() as s:
        before = await s.scalar(select(ServerApiKey.encrypted_key))
    with pytest.raises(VaultError):
        async with sessions() as s, s.begin():
            await rotate_all(s, Vault([Fernet.generate_key()]))
    async with sessions() as s:
        assert await s.scalar(select(ServerApiKey.encrypted_key)) == before


async def test_one_undecryptable_key_is_skipped_and_listed_as_such(sessions, vault, caplog):
    """A key stored under a dropped encryption key must not take the rest of the pool down."""
    lost = Vault([Fernet.generate_key()])
    async with sessions() as s, s.begin():
        await repo.add_server_key(s, lost, 1, "openai", "sk-lost-under-old-key-1111", label="old")
        await repo.add_server_key(s, vault, 1, "openai", "sk-good-current-key-2222", label="good")
    async with sessions() as s:
        leases = await repo.usable_server_keys(s, vault, 1, "openai", NOW)
        listed = {k.label: k for k in await repo.list_server_keys(s, 1, vault=vault)}
    assert [lease.secret for lease in leases] == ["sk-good-current-key-2222"]
    assert listed["old"].undecryptable and not listed["good"].undecryptable
    assert "cannot be decrypted" in caplog.text and "`old`" in caplog.text
    assert "sk-lost" not in caplog.text


async def test_adding_a_key_beside_an_undecryptable_one_works(sessions, vault):
    lost = Vault([Fernet.generate_key()])
    async with sessions() as s, s.begin():
        await repo.add_server_key(s, lost, 1, "openai", "sk-lost-under-old-key-1111")
    async with sessions() as s, s.begin():
        info = await repo.add_server_key(s, vault, 1, "openai", "sk-good-current-key-2222")
    assert info.label == "key-2"


async def test_undecryptable_personal_key_is_unusable_not_fatal(sessions, vault):
    lost = Vault([Fernet.generate_key()])
    async with sessions() as s, s.begin():
        await repo.set_personal_key(s, lost, 7, None, "sk-personal-lost-3333")
        await repo.set_personal_model(s, 7, None, "openai", "gpt-p")
    async with sessions() as s:
        info = await repo.get_personal(s, 7, None, vault=vault)
        assert info.undecryptable
        assert await repo.usable_personal_key(s, vault, info, NOW) is None


async def test_rotation_refreshes_fingerprints_and_short_masks(sessions):
    """Rows written before fingerprints and quarter masks get both from a rotation."""
    old, new = Fernet.generate_key(), Fernet.generate_key()
    async with sessions() as s, s.begin():
        await repo.add_server_key(s, Vault([old]), 1, "openai", "sk-1234567890")
        row = await s.scalar(select(ServerApiKey))
        row.key_fingerprint, row.last4 = None, "7890"  # as stored by an older version
    async with sessions() as s, s.begin():
        assert await rotate_all(s, Vault([new, old])) == 1
    async with sessions() as s:
        row = await s.scalar(select(ServerApiKey))
    assert row.key_fingerprint == Vault([new]).key_fingerprint("sk-1234567890")
    assert row.last4 == "890"


async def test_rotation_keeps_a_pool_that_held_one_key_twice(sessions):
    """Pools written before the database refused duplicates may hold a key twice."""
    old, new = Fernet.generate_key(), Fernet.generate_key()
    before = Vault([old])
    async with sessions() as s, s.begin():
        await repo.ensure_server(s, 1)
        for label in ("first", "second"):
            s.add(ServerApiKey(guild_id=1, provider="openai", label=label, last4="7777",
                               encrypted_key=before.encrypt("sk-twice-stored-7777")))
    async with sessions() as s, s.begin():
        assert await rotate_all(s, Vault([new, old])) == 2
    async with sessions() as s:
        rows = {row.label: row for row in await s.scalars(select(ServerApiKey))}
    assert rows["first"].key_fingerprint == Vault([new]).key_fingerprint("sk-twice-stored-7777")
    assert rows["second"].key_fingerprint is None
    assert Vault([new]).decrypt(rows["second"].encrypted_key) == "sk-twice-stored-7777"
