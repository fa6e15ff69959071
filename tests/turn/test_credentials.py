"""Route legs and the server's capability switch, on a migrated SQLite database, read
through the configuration cache (each write below commits through the cache's own
sessions, so the next read sees it): a question reads its configuration once
(`read_config`) and the credentials decide from that snapshot."""

from __future__ import annotations

from cryptography.fernet import Fernet

from bot import migrate, repo
from bot.db.engine import create_engine
from bot.load.config_cache import ConfigCache, ConfigSnapshot, read_config
from bot.load.write_behind import WriteBehind
from bot.repo import KeyLease, KeyRef, ModelTarget
from bot.settings import load_settings
from bot.turn.access import ProviderAccess
from bot.turn.attempts import open_adapter
from bot.turn.credentials import DatabaseCredentials, EnvironmentCredentials
from bot.vault import Vault

GUILD, MEMBER = 1001, 2002


async def _credentials(tmp_path):
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path}/legs.sqlite3")
    await migrate.upgrade(engine)
    settings = load_settings(_env_file=None, DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/legs.sqlite3")
    vault = Vault([Fernet.generate_key()])
    config = ConfigCache(engine, settings)
    writes = WriteBehind(config.sessions, 0.05)
    credentials = DatabaseCredentials(config, vault, writes)
    credentials.config = config  # what `read` below reads from
    return engine, config.sessions, vault, credentials


async def read(credentials, guild: int | None, member: int):
    """A question's one read, and the route the credentials make of it."""
    snapshot = await read_config(credentials.config, guild, member)
    return credentials.route(snapshot), snapshot


async def test_personal_route_has_a_server_leg_only_when_allowed_and_not_required(tmp_path):
    engine, sessions, vault, credentials = await _credentials(tmp_path)
    try:
        async with sessions() as s, s.begin():
            await repo.set_custom_endpoint(s, GUILD, "http://127.0.0.1:9/v1", "model-a")
            await repo.add_fallback(s, GUILD, "custom", "model-b")
            await repo.set_personal_key(s, vault, MEMBER, GUILD, "sk-personal-abcd")
            await repo.set_personal_model(s, MEMBER, GUILD, "openai", "gpt-own")
            await repo.set_personal_override(s, MEMBER, GUILD, True)
        route, _ = await read(credentials, GUILD, MEMBER)
        assert [leg.credential_source for leg in route.legs] == ["personal"]
        assert route.legs[0].chain == (ModelTarget("openai", "gpt-own"),)

        async with sessions() as s, s.begin():
            await repo.set_personal_server_fallback(s, MEMBER, GUILD, True)
        route, snapshot = await read(credentials, GUILD, MEMBER)
        assert [leg.credential_source for leg in route.legs] == ["personal", "server"]
        assert [t.model for t in route.legs[1].chain] == ["model-a", "model-b"]
        [lease] = await credentials.pool(snapshot, route.legs[0], route.legs[0].chain[0])
        assert lease.secret == "sk-personal-abcd" and "sk-personal" not in repr(lease)

        async with sessions() as s, s.begin():
            await repo.set_member_keys_required(s, GUILD, True)
        route, _ = await read(credentials, GUILD, MEMBER)
        assert [leg.credential_source for leg in route.legs] == ["personal"]

        route, _ = await read(credentials, GUILD, MEMBER + 1)  # a member without a key
        assert (route.legs, route.blocked) == ((), "member_key_required")
    finally:
        await engine.dispose()


async def test_verbatim_tool_calling_reaches_custom_adapters_only(tmp_path):
    engine, sessions, vault, credentials = await _credentials(tmp_path)
    try:
        assert (await read(credentials, GUILD, MEMBER))[0].verbatim_tool_calling is False
        async with sessions() as s, s.begin():
            await repo.set_custom_endpoint(s, GUILD, "http://127.0.0.1:9/v1", "model-a")
            await repo.add_server_key(s, vault, GUILD, "custom", "sk-test-abcd")
            await repo.set_verbatim_tool_calling(s, GUILD, True)
        route, _ = await read(credentials, GUILD, MEMBER)
        assert route.verbatim_tool_calling is True
        lease = KeyLease(KeyRef("server", 1), "…abcd", "sk-test-abcd")
        custom = open_adapter(route.legs[0].chain[0], lease, route.verbatim_tool_calling, ProviderAccess())
        openai = open_adapter(ModelTarget("openai", "gpt-x"), lease, route.verbatim_tool_calling, ProviderAccess())
        assert custom.verbatim_tool_calling is True and openai.verbatim_tool_calling is False
        assert open_adapter(ModelTarget("custom", "no-address"), lease, True, ProviderAccess()) is None  # no base URL
    finally:
        await engine.dispose()


async def test_environment_credentials_keep_the_configured_order():
    settings = load_settings(_env_file=None, DEFAULT_TEXT_PROVIDER="openai", DEFAULT_TEXT_MODEL="m",
                             DEFAULT_TEXT_API_KEYS="sk-one-1111,sk-two-2222")
    credentials = EnvironmentCredentials(settings)
    no_database = ConfigSnapshot("none")
    route = credentials.route(no_database)
    pool = await credentials.pool(no_database, route.legs[0], route.legs[0].chain[0])
    assert [lease.masked for lease in pool] == ["…11", "…22"]  # never more than a quarter of a key
    assert EnvironmentCredentials(load_settings(_env_file=None)).route(no_database).blocked == "no_route"
