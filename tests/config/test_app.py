"""What LLMBot builds once for every cog: one vault, the session factory, the credentials."""

from __future__ import annotations

from cryptography.fernet import Fernet

from bot.app import credentials_for
from bot.load.config_cache import ConfigSnapshot
from bot.settings import load_settings
from bot.turn import DatabaseCredentials, EnvironmentCredentials
from bot.vault import Vault


async def test_the_bot_reads_keys_through_one_vault_and_the_database(bot_factory):
    bot = bot_factory(DEFAULT_TEXT_PROVIDER="openai", DEFAULT_TEXT_MODEL="gpt-env")
    try:
        token = Vault([bot_factory.encryption_key.encode()]).encrypt("sk-app-7777")
        assert bot.vault.decrypt(token) == "sk-app-7777"
        assert bot.encryption_keys == [bot_factory.encryption_key.encode()]
        assert isinstance(bot.credentials, DatabaseCredentials)
        assert bot.settings.DEFAULT_TEXT_MODEL == "gpt-env"
        async with bot.sessions() as session:
            assert session.bind is bot.engine
    finally:
        await bot.engine.dispose()


async def test_without_a_database_turns_use_the_environment_default():
    settings = load_settings(_env_file=None, DEFAULT_TEXT_PROVIDER="deepseek", DEFAULT_TEXT_MODEL="ds-env",
                             DEFAULT_TEXT_API_KEYS="sk-env-1", BOT_ENCRYPTION_KEY=Fernet.generate_key().decode())
    credentials = credentials_for(None, None, settings)
    assert isinstance(credentials, EnvironmentCredentials)
    route = credentials.route(ConfigSnapshot("none"))
    assert [(t.provider, t.model) for leg in route.legs for t in leg.chain] == [("deepseek", "ds-env")]
