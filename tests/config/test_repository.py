"""Repository functions against real SQLite and (when configured) PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from bot import repo
from bot.db.models import EnvironmentKeyHealth, PersonalConfig, ServerApiKey
from bot.repo import KeyRef, ModelTarget, RepositoryError
from bot.repo.common import as_utc
from bot.settings import load_settings

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
G1, G2 = 111, 222
ALICE, BOB = 1001, 1002


def env_settings(**values):
    return load_settings(_env_file=None, **values)


async def test_key_pool_add_list_remove_is_masked_and_scoped(sessions, vault):
    async with sessions() as s, s.begin():
        first = await repo.add_server_key(s, vault, G1, "openai", "sk-first-aaaa1111")
        second = await repo.add_server_key(s, vault, G1, "OpenAI", "sk-second-bbbb2222", label="backup")
        await repo.add_server_key(s, vault, G2, "openai", "sk-other-cccc3333")
    assert (first.label, first.masked) == ("key-1", "\u20261111")
    assert (second.label, second.masked, second.provider) == ("backup", "\u20262222", "openai")
    async with sessions() as s:
        listed = await repo.list_server_keys(s, G1)
        assert [k.label for k in listed] == ["key-1", "backup"]
        assert all(k.health.successes == 0 and k.health.cooling_down_until is None for k in listed)
    async with sessions() as s, s.begin():
        # another server's key of the same label is out of reach
        assert await repo.remove_server_key(s, G2, "openai", "backup") is False
        assert await repo.remove_server_key(s, G1, "openai", "backup") is True
    async with sessions() as s:
        assert [k.label for k in await repo.list_server_keys(s, G1)] == ["key-1"]
        assert [k.masked for k in await repo.list_server_keys(s, G2)] == ["\u20263333"]


@pytest.mark.parametrize(("provider", "secret", "code"), [
    ("nope", "sk-valid-1234", "unknown_provider"),
    ("openai", "   ", "empty_key"),
    ("openai", "sk with space", "bad_key"),
])
async def test_bad_key_input_stores_nothing(sessions, vault, provider, secret, code):
    async with sessions() as s, s.begin():
        with pytest.raises(RepositoryError) as err:
            await repo.add_server_key(s, vault, G1, provider, secret)
    assert err.value.code == code
    async with sessions() as s:
        assert (await s.scalars(select(ServerApiKey))).all() == []


async def test_duplicate_key_and_label_refused(sessions, vault):
    async with sessions() as s, s.begin():
        await repo.add_server_key(s, vault, G1, "anthropic", "sk-ant-same-9999", label="main")
    for secret, label, code in [("sk-ant-same-9999", None, "key_duplicate"),
                                ("sk-ant-diff-8888", "main", "label_taken")]:
        async with sessions() as s, s.begin():
            with pytest.raises(RepositoryError) as err:
                await repo.add_server_key(s, vault, G1, "anthropic", secret, label=label)
        assert err.value.code == code
    async with sessions() as s:
        assert len(await repo.list_server_keys(s, G1)) == 1


async def test_key_stored_encrypted_and_decrypts(sessions, vault):
    async with sessions() as s, s.begin():
        await repo.add_server_key(s, vault, G1, "google", "AIza-canary-secret-7777")
    async with sessions() as s:
        row = await s.scalar(select(ServerApiKey))
        assert b"canary" not in row.encrypted_key and row.encrypted_key.startswith(b"gAAAAA")
        leases = await repo.usable_server_keys(s, vault, G1, "google", NOW)
    assert [lease.secret for lease in leases] == ["AIza-canary-secret-7777"]
    assert "canary" not in repr(leases[0])


async def test_health_counts_and_cool_down_shared_through_the_database(engine, sessions, vault):
    async with sessions() as s, s.begin():
        a = await repo.add_server_key(s, vault, G1, "openai", "sk-a-0001")
        b = await repo.add_server_key(s, vault, G1, "openai", "sk-b-0002")
    # "process 1" records a rate limit with a cool-down; "process 2" (a fresh session) sees it
    async with sessions() as s, s.begin():
        await repo.record_key_failure(s, KeyRef("server", a.id), "rate_limit", NOW,
                                      NOW + timedelta(minutes=5))
        await repo.record_key_success(s, KeyRef("server", b.id), NOW)
        await repo.record_key_success(s, KeyRef("server", b.id), NOW)
    async with sessions() as s:
        usable = await repo.usable_server_keys(s, vault, G1, "openai", NOW + timedelta(minutes=1))
        assert [lease.ref.ident for lease in usable] == [b.id]
        later = await repo.usable_server_keys(s, vault, G1, "openai", NOW + timedelta(minutes=6))
        assert {lease.ref.ident for lease in later} == {a.id, b.id}
        health = {k.label: k.health for k in await repo.list_server_keys(s, G1)}
    assert (health["key-1"].errors, health["key-1"].last_error_type) == (1, "rate_limit")
    assert health["key-1"].cooling_down_until == NOW + timedelta(minutes=5)
    assert (health["key-2"].successes, health["key-2"].errors) == (2, 0)


async def test_cool_down_only_extends(sessions, vault):
    async with sessions() as s, s.begin():
        k = await repo.add_server_key(s, vault, G1, "deepseek", "sk-ds-4444")
        ref = KeyRef("server", k.id)
        await repo.record_key_failure(s, ref, "balance_exhausted", NOW, NOW + timedelta(hours=6))
        await repo.record_key_failure(s, ref, "rate_limit", NOW, NOW + timedelta(seconds=30))
    async with sessions() as s:
        (info,) = await repo.list_server_keys(s, G1)
    assert info.health.cooling_down_until == NOW + timedelta(hours=6)
    assert (info.health.errors, info.health.last_error_type) == (2, "rate_limit")


async def test_environment_keys_health_shared(sessions, vault):
    secrets = ["env-key-one-1111", "env-key-two-2222"]
    async with sessions() as s, s.begin():
        leases = await repo.usable_environment_keys(s, secrets, NOW)
        assert [lease.masked for lease in leases] == ["\u20261111", "\u20262222"]
        await repo.record_key_failure(s, leases[0].ref, "rate_limit", NOW, NOW + timedelta(minutes=1))
    async with sessions() as s, s.begin():
        assert [lease.secret for lease in await repo.usable_environment_keys(s, secrets, NOW)] == [secrets[1]]
        await repo.record_key_success(s, KeyRef("environment", leases[1].ref.ident), NOW)
        health = await repo.environment_key_health(s, secrets)
    assert [(h.errors, h.successes) for h in health] == [(1, 0), (0, 1)]


async def test_a_success_adds_its_count_and_ends_the_rest_on_every_kind_of_key(sessions, vault):
    """One statement per key kind: a stored key's row is updated, an environment key's row
    is made by its first success; each adds its count, and the last success ends a rest."""
    async with sessions() as s, s.begin():
        server_key = await repo.add_server_key(s, vault, G1, "openai", "sk-srv-5555")
        await repo.set_personal_key(s, vault, ALICE, G1, "sk-alice-6666")
    async with sessions() as s:
        personal_id = await s.scalar(select(PersonalConfig.id).where(PersonalConfig.user_id == ALICE))
    refs = [KeyRef("server", server_key.id), KeyRef("personal", personal_id), KeyRef("environment", "fp-new")]
    async with sessions() as s, s.begin():
        for ref in refs:
            await repo.record_key_failure(s, ref, "rate_limit", NOW, NOW + timedelta(minutes=5))
            await repo.record_key_success(s, ref, NOW + timedelta(seconds=1), count=3)
            await repo.record_key_success(s, ref, NOW + timedelta(seconds=2))
        await repo.record_key_success(s, KeyRef("environment", "fp-first"), NOW)  # no row yet
    async with sessions() as s:
        rows = [await s.get(ServerApiKey, server_key.id), await s.get(PersonalConfig, personal_id),
                await s.get(EnvironmentKeyHealth, "fp-new")]
        first = await s.get(EnvironmentKeyHealth, "fp-first")
    for row in rows:
        assert (row.successes, row.errors, row.cooling_down_until) == (4, 1, None)
        assert as_utc(row.last_used_at) == NOW + timedelta(seconds=2)
    assert (first.successes, first.errors, first.cooling_down_until) == (1, 0, None)
    assert as_utc(first.last_used_at) == NOW


async def test_text_model_endpoint_capabilities_and_server_switches(sessions):
    async with sessions() as s, s.begin():
        assert await repo.set_text_model(s, G1, "anthropic", "claude-x") == ModelTarget("anthropic", "claude-x")
        await repo.set_verbatim_tool_calling(s, G1, True)
        await repo.set_thought_log_channel(s, G1, 555)
        await repo.set_member_keys_required(s, G1, True)
    async with sessions() as s:
        stored = await repo.get_server_settings(s, G1)
    assert (stored.provider, stored.model, stored.base_url) == ("anthropic", "claude-x", None)
    assert stored.verbatim_tool_calling_enabled and stored.member_keys_required
    assert stored.thought_log_channel_id == 555
    async with sessions() as s, s.begin():
        target = await repo.set_custom_endpoint(s, G1, "https://llm.example.com/v1", None)
        await repo.set_thought_log_channel(s, G1, None)
    assert target == ModelTarget("custom", "claude-x", "https://llm.example.com/v1")
    async with sessions() as s:
        stored = await repo.get_server_settings(s, G1)
        untouched = await repo.get_server_settings(s, G2)
    assert (stored.provider, stored.thought_log_channel_id) == ("custom", None)
    assert untouched.provider is None and not untouched.member_keys_required


async def test_bad_model_and_endpoint_without_model_store_nothing(sessions):
    for call, code in [
        (lambda s: repo.set_text_model(s, G1, "openai", "  "), "bad_model"),
        (lambda s: repo.set_text_model(s, G1, "mystery", "m"), "unknown_provider"),
        (lambda s: repo.set_custom_endpoint(s, G1, "https://x.example/v1", None), "model_required"),
    ]:
        async with sessions() as s, s.begin():
            with pytest.raises(RepositoryError) as err:
                await call(s)
        assert err.value.code == code
    async with sessions() as s:
        assert (await repo.get_server_settings(s, G1)).provider is None


async def test_fallback_chain_order_remove_and_duplicates(sessions):
    async with sessions() as s, s.begin():
        for model in ("m1", "m2", "m3"):
            await repo.add_fallback(s, G1, "openrouter", model)
        with pytest.raises(RepositoryError):
            await repo.add_fallback(s, G1, "openrouter", "m2")
    async with sessions() as s, s.begin():
        assert await repo.remove_fallback(s, G1, 1) == ModelTarget("openrouter", "m1")
        assert await repo.remove_fallback(s, G1, 9) is None
        assert await repo.add_fallback(s, G1, "google", "g1") == 3
    async with sessions() as s:
        chain = await repo.list_fallbacks(s, G1)
    assert [t.model for t in chain] == ["m2", "m3", "g1"]


async def test_personal_scopes_touch_only_the_caller(sessions, vault):
    async with sessions() as s, s.begin():
        await repo.set_personal_key(s, vault, ALICE, G1, "sk-alice-g1-1111")
        await repo.set_personal_model(s, ALICE, G1, "openai", "gpt-a")
        await repo.set_personal_key(s, vault, ALICE, None, "sk-alice-global-2222")
        await repo.set_personal_key(s, vault, BOB, G1, "sk-bob-secret-3333")
        await repo.set_personal_override(s, ALICE, G1, False)
        with pytest.raises(RepositoryError) as err:
            await repo.set_personal_override(s, BOB, G1, True)  # no model yet
        assert err.value.code == "personal_incomplete"
    async with sessions() as s, s.begin():
        assert await repo.remove_personal_key(s, ALICE, G1) is True
    async with sessions() as s:
        alice_g1 = await repo.get_personal(s, ALICE, G1)
        alice_global = await repo.get_personal(s, ALICE, None)
        bob = await repo.get_personal(s, BOB, G1)
        assert (await repo.effective_personal(s, ALICE, G2)).masked_key == "\u20262222"
    assert alice_g1.masked_key is None and alice_g1.model == "gpt-a"
    assert alice_global.masked_key == "\u20262222"
    assert bob.masked_key == "\u20263333"


async def test_one_global_personal_row_per_member(sessions):
    async with sessions() as s, s.begin():
        s.add(PersonalConfig(user_id=ALICE, guild_id=None))
    with pytest.raises(IntegrityError):
        async with sessions() as s, s.begin():
            s.add(PersonalConfig(user_id=ALICE, guild_id=None))


async def test_foreign_keys_enforced(sessions):
    with pytest.raises(IntegrityError):
        async with sessions() as s, s.begin():
            s.add(ServerApiKey(guild_id=999999, provider="openai", label="x", encrypted_key=b"t", last4="abcd"))


async def test_routes_environment_server_personal_and_byok(sessions, vault):
    settings = env_settings(DEFAULT_TEXT_PROVIDER="google", DEFAULT_TEXT_MODEL="gemini-env",
                            DEFAULT_TEXT_API_KEYS="env-aaaa1111")
    async with sessions() as s:
        route = await repo.resolve_active_route(s, settings, G1, ALICE)
        assert (route.credential_source, route.origin) == ("server", "environment")
        assert route.chain == (ModelTarget("google", "gemini-env"),)
        pool = await repo.server_key_pool(s, vault, settings, G1, route.chain[0], NOW)
        assert [lease.ref.kind for lease in pool] == ["environment"]
        nothing = await repo.resolve_active_route(s, env_settings(), G1, ALICE)
        assert nothing.blocked == "no_route"
    async with sessions() as s, s.begin():
        await repo.set_text_model(s, G1, "anthropic", "claude-s")
        await repo.add_fallback(s, G1, "google", "gemini-f")
        await repo.add_server_key(s, vault, G1, "google", "AIza-server-5555")
        await repo.set_personal_key(s, vault, ALICE, None, "sk-alice-6666")
        await repo.set_personal_model(s, ALICE, None, "openai", "gpt-p")
    async with sessions() as s:
        route = await repo.resolve_active_route(s, settings, G1, ALICE)
        assert (route.credential_source, route.origin) == ("server", "server")
        assert route.chain == (ModelTarget("anthropic", "claude-s"), ModelTarget("google", "gemini-f"))
        # the server stored google keys, so the environment pool no longer serves google
        pool = await repo.server_key_pool(s, vault, settings, G1, route.chain[1], NOW)
        assert [lease.secret for lease in pool] == ["AIza-server-5555"]
        assert await repo.server_key_pool(s, vault, settings, G1, route.chain[0], NOW) == []
    async with sessions() as s, s.begin():
        await repo.set_personal_override(s, ALICE, None, True)
        await repo.set_personal_server_fallback(s, ALICE, None, True)
    async with sessions() as s:
        route = await repo.resolve_active_route(s, settings, G1, ALICE)
        assert route.credential_source == "personal" and route.chain == (ModelTarget("openai", "gpt-p"),)
        assert route.server_fallback is not None and route.server_fallback.origin == "server"
        lease = await repo.usable_personal_key(s, vault, route.personal, NOW)
        assert lease.secret == "sk-alice-6666"
        bob = await repo.resolve_active_route(s, settings, G1, BOB)
        assert bob.credential_source == "server"
    async with sessions() as s, s.begin():
        await repo.set_member_keys_required(s, G1, True)
    async with sessions() as s:
        route = await repo.resolve_active_route(s, settings, G1, ALICE)
        assert route.credential_source == "personal" and route.server_fallback is None
        assert (await repo.resolve_active_route(s, settings, G1, BOB)).blocked == "member_key_required"


async def test_two_processes_share_health_and_cool_downs(engine_factory, vault):
    """Scale-out: shard processes share one database; nothing lives in process memory."""
    import asyncio

    from bot.db.engine import session_factory

    first, second = session_factory(engine_factory()), session_factory(engine_factory())
    async with first() as s, s.begin():
        key = await repo.add_server_key(s, vault, G1, "openai", "sk-shared-0a0a")
        await repo.set_text_model(s, G1, "openai", "gpt-shared")
    ref = KeyRef("server", key.id)

    async def bump(sessions, n):
        for _ in range(n):
            async with sessions() as s, s.begin():
                await repo.record_key_success(s, ref, NOW)

    await asyncio.gather(bump(first, 10), bump(second, 10))
    async with second() as s, s.begin():
        await repo.record_key_failure(s, ref, "rate_limit", NOW, NOW + timedelta(minutes=2))
    async with first() as s:
        (info,) = await repo.list_server_keys(s, G1)
        assert await repo.usable_server_keys(s, vault, G1, "openai", NOW + timedelta(minutes=1)) == []
        route = await repo.resolve_active_route(s, env_settings(), G1, ALICE)
    assert (info.health.successes, info.health.errors) == (20, 1)
    assert route.chain == (ModelTarget("openai", "gpt-shared"),)


async def test_custom_provider_needs_an_endpoint_first(sessions):
    for call in (lambda s: repo.set_text_model(s, G1, "custom", "local-model"),
                 lambda s: repo.add_fallback(s, G1, "custom", "local-model")):
        async with sessions() as s, s.begin():
            with pytest.raises(RepositoryError) as err:
                await call(s)
        assert err.value.code == "endpoint_required"
    async with sessions() as s, s.begin():
        await repo.set_custom_endpoint(s, G1, "https://llm.example.com/v1", "first")
        await repo.set_text_model(s, G1, "openai", "gpt-x")
        assert await repo.add_fallback(s, G1, "custom", "local-model") == 1
    async with sessions() as s:
        route = await repo.resolve_server_route(s, env_settings(), G1)
    assert route.chain == (ModelTarget("openai", "gpt-x"),
                           ModelTarget("custom", "local-model", "https://llm.example.com/v1"))


# ---- control characters never reach the database --------------------------------------------

CONTROL = ["\x00", "\x1b", "\x7f", "\n", "\u0085"]


@pytest.mark.parametrize("char", CONTROL)
async def test_control_characters_refused_everywhere(sessions, vault, char):
    calls = [
        lambda s: repo.add_server_key(s, vault, G1, "openai", f"sk-nul{char}-key-1234"),
        lambda s: repo.add_server_key(s, vault, G1, "openai", "sk-fine-key-1234", label=f"bad{char}label"),
        lambda s: repo.set_text_model(s, G1, "openai", f"gpt{char}x"),
        lambda s: repo.add_fallback(s, G1, "openai", f"gpt{char}x"),
        lambda s: repo.set_custom_endpoint(s, G1, f"https://llm.exa{char}mple.com/v1", "m"),
        lambda s: repo.set_custom_endpoint(s, G1, "https://llm.example.com/v1", f"m{char}x"),
        lambda s: repo.set_personal_key(s, vault, ALICE, G1, f"sk-alice{char}-1234"),
        lambda s: repo.set_personal_model(s, ALICE, None, "openai", f"gpt{char}p"),
    ]
    for call in calls:
        async with sessions() as s, s.begin():
            with pytest.raises(RepositoryError) as err:
                await call(s)
        assert err.value.code == "control_characters"
    async with sessions() as s:
        assert (await s.scalars(select(ServerApiKey))).all() == []
        assert (await s.scalars(select(PersonalConfig))).all() == []
        assert (await repo.get_server_settings(s, G1)).model is None


async def test_surrounding_line_breaks_of_a_paste_are_trimmed_not_refused(sessions, vault):
    async with sessions() as s, s.begin():
        info = await repo.add_server_key(s, vault, G1, "openai", "\r\nsk-pasted-key-1234\n", label=" main\n")
        await repo.set_text_model(s, G1, "openai", "gpt-x\n")
    assert (info.label, info.masked) == ("main", "\u20261234")
    async with sessions() as s:
        assert [k.secret for k in await repo.usable_server_keys(s, vault, G1, "openai", NOW)] == [
            "sk-pasted-key-1234"]
        assert (await repo.get_server_settings(s, G1)).model == "gpt-x"


async def test_lookups_with_control_characters_find_nothing(sessions, vault):
    async with sessions() as s, s.begin():
        await repo.add_server_key(s, vault, G1, "openai", "sk-kept-key-1234", label="main")
    async with sessions() as s, s.begin():
        assert await repo.remove_server_key(s, G1, "openai", "main\x00") is False
        assert await repo.list_server_keys(s, G1, "open\x00ai") == []
        with pytest.raises(RepositoryError) as err:
            await repo.set_text_model(s, G1, "open\x00ai", "gpt-x")
    assert err.value.code == "unknown_provider" and "\x00" not in str(err.value.params)
    async with sessions() as s:
        assert [k.label for k in await repo.list_server_keys(s, G1)] == ["main"]


async def test_the_database_refuses_the_same_key_twice_in_a_pool(sessions, vault):
    async with sessions() as s, s.begin():
        await repo.add_server_key(s, vault, G1, "openai", "sk-unique-key-1234", label="a")
        row = await s.scalar(select(ServerApiKey))
        assert row.key_fingerprint == vault.key_fingerprint("sk-unique-key-1234")
        assert "sk-unique" not in row.key_fingerprint
    with pytest.raises(IntegrityError):
        async with sessions() as s, s.begin():
            s.add(ServerApiKey(guild_id=G1, provider="openai", label="b", encrypted_key=b"t",
                               last4="1234", key_fingerprint=row.key_fingerprint))
    async with sessions() as s, s.begin():  # another provider or server may hold it
        await repo.add_server_key(s, vault, G1, "openrouter", "sk-unique-key-1234")
        await repo.add_server_key(s, vault, G2, "openai", "sk-unique-key-1234")


# ---- the operator's environment keys pay only for the operator's own default ----------------

async def test_environment_keys_never_pay_for_a_model_the_server_picked(sessions, vault):
    settings = env_settings(DEFAULT_TEXT_PROVIDER="openai", DEFAULT_TEXT_MODEL="gpt-env",
                            DEFAULT_TEXT_API_KEYS="sk-env-aaaa1111")
    async with sessions() as s, s.begin():
        await repo.set_text_model(s, G1, "openai", "o1-pro")
    async with sessions() as s:
        route = await repo.resolve_active_route(s, settings, G1, ALICE)
        assert route.blocked == "server_keys_required" and route.credential_source is None
        assert await repo.server_key_pool(s, vault, settings, G1, ModelTarget("openai", "o1-pro"), NOW) == []
        # even naming the operator's own model does not bring its keys back
        assert await repo.server_key_pool(s, vault, settings, G1, ModelTarget("openai", "gpt-env"), NOW) == []
        other = await repo.resolve_active_route(s, settings, G2, ALICE)
        assert other.origin == "environment" and other.chain == (ModelTarget("openai", "gpt-env"),)
        assert [k.secret for k in await repo.server_key_pool(s, vault, settings, G2, other.chain[0], NOW)] == [
            "sk-env-aaaa1111"]
    async with sessions() as s, s.begin():
        await repo.add_server_key(s, vault, G1, "openai", "sk-server-bbbb2222")
    async with sessions() as s:
        route = await repo.resolve_active_route(s, settings, G1, ALICE)
        assert route.blocked is None and route.chain == (ModelTarget("openai", "o1-pro"),)
        pool = await repo.server_key_pool(s, vault, settings, G1, route.chain[0], NOW)
    assert [k.secret for k in pool] == ["sk-server-bbbb2222"]


@pytest.mark.parametrize("configure", ["fallback", "key", "model"])
async def test_any_provider_configuration_ends_the_environment_default(sessions, vault, configure):
    settings = env_settings(DEFAULT_TEXT_PROVIDER="google", DEFAULT_TEXT_MODEL="gemini-env",
                            DEFAULT_TEXT_API_KEYS="AIza-env-cccc3333")
    env_target = ModelTarget("google", "gemini-env")
    async with sessions() as s, s.begin():
        if configure == "fallback":
            await repo.add_fallback(s, G1, "google", "gemini-env")
        elif configure == "key":
            await repo.add_server_key(s, vault, G1, "anthropic", "sk-ant-dddd4444")
        else:
            await repo.set_text_model(s, G1, "google", "gemini-env")
    async with sessions() as s:
        route = await repo.resolve_active_route(s, settings, G1, ALICE)
        assert route.origin != "environment"
        assert route.blocked in ("server_keys_required", "no_route")
        assert await repo.server_key_pool(s, vault, settings, G1, env_target, NOW) == []


async def test_environment_default_keeps_the_operator_address_for_every_provider(sessions, vault):
    gateway = "https://gateway.example.com/v1"
    settings = env_settings(DEFAULT_TEXT_PROVIDER="openai", DEFAULT_TEXT_MODEL="gpt-env",
                            DEFAULT_TEXT_BASE_URL=gateway, DEFAULT_TEXT_API_KEYS="sk-env-eeee5555")
    async with sessions() as s:
        route = await repo.resolve_active_route(s, settings, G1, ALICE)
        assert route.chain == (ModelTarget("openai", "gpt-env", gateway),)
        assert [k.secret for k in await repo.server_key_pool(s, vault, settings, G1, route.chain[0], NOW)] == [
            "sk-env-eeee5555"]
        # the same provider and model at the public address is not the operator's default
        assert await repo.server_key_pool(s, vault, settings, G1, ModelTarget("openai", "gpt-env"), NOW) == []
    async with sessions() as s, s.begin():
        await repo.set_text_model(s, G1, "openai", "gpt-env")
    async with sessions() as s:
        route = await repo.resolve_active_route(s, settings, G1, ALICE)
    assert route.blocked == "server_keys_required"
