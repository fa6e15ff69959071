"""The vault: Fernet at rest, MultiFernet rotation, masking, no secret in error text."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import select

from bot import repo
from bot.db.models import PersonalConfig, ServerApiKey
from bot.vault import Vault, VaultError, mask, rotate_all

CANARY = "sk-CANARY-vault-0000-zz9y"


def test_mask_shows_only_the_tail():
    assert mask(CANARY) == "\u2026zz9y"
    assert mask("abc") == "\u2026abc"


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
