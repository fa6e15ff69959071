"""`/keys add|list|remove` through the fake Discord, with the modal and the canary key."""

from __future__ import annotations

import logging

from sqlalchemy import select

from bot.db.models import ServerApiKey
from providers import KNOWN_PROVIDERS
from tests.support.drive_commands import NO_PERMISSIONS, command, member, opt, sub, submit_modal
from tests.support.drive_discord_client import running_bot

CANARY = "sk-CANARY-keys-51e7c0de"


async def stored_keys(bot) -> list[ServerApiKey]:
    async with bot.sessions() as session:
        return list(await session.scalars(select(ServerApiKey).order_by(ServerApiKey.id)))


async def test_add_through_modal_list_masked_and_remove(fake_discord, bot_factory, caplog):
    caplog.set_level(logging.DEBUG)
    fake = fake_discord
    bot = bot_factory()
    async with running_bot(fake, bot) as run:
        form = await command(run, fake, "keys", sub("add", opt("provider", "openai"), opt("label", "main")))
        assert form.type == 9 and form.data["title"] == "Add a key for openai"
        assert await stored_keys(bot) == []  # nothing is stored before the form is submitted
        done = await submit_modal(run, fake, form, CANARY)
        assert done.ephemeral and done.content == "Added openai key `main` (\u2026c0de)."
        listed = await command(run, fake, "keys", sub("list"))
        assert listed.ephemeral
        assert "openai `main` \u2026c0de: 0 ok, 0 errors (last: none), ready" in listed.content
        rows = await stored_keys(bot)
        assert [(r.provider, r.label, r.last4) for r in rows] == [("openai", "main", "c0de")]
        gone = await command(run, fake, "keys", sub("remove", opt("provider", "openai"), opt("label", "main")))
        assert gone.content == "Removed openai key `main`." and gone.ephemeral
        assert await stored_keys(bot) == []
    everything = [m.content for m in fake.messages.values()] + [str(r) for r in fake.interaction_responses]
    assert not any(CANARY in text for text in everything)
    assert CANARY not in caplog.text


async def test_member_without_manage_server_is_refused_everywhere(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    refused = "You need the Manage Server permission for this command."
    async with running_bot(fake, bot) as run:
        for options in ([sub("add", opt("provider", "openai"))], [sub("list")],
                        [sub("remove", opt("provider", "openai"), opt("label", "key-1"))]):
            answer = await command(run, fake, "keys", *options, permissions=NO_PERMISSIONS)
            assert (answer.type, answer.content, answer.ephemeral) == (4, refused, True)
        # a form opened by a manager and submitted by someone who lost the permission
        form = await command(run, fake, "keys", sub("add", opt("provider", "anthropic")))
        late = await submit_modal(run, fake, form, "sk-ant-late-1234", permissions=NO_PERMISSIONS)
        assert late.content == refused
        assert await stored_keys(bot) == []


async def test_synced_with_manage_server_default_and_japanese_localizations(fake_discord, bot_factory):
    fake = fake_discord
    async with running_bot(fake, bot_factory()):
        synced = {c["name"]: c for c in fake.commands["global"]}
    assert int(synced["keys"]["default_member_permissions"]) == 1 << 5
    assert int(synced["settings"]["default_member_permissions"]) == 1 << 5
    assert synced["personal"]["default_member_permissions"] is None
    assert synced["status"]["default_member_permissions"] is None
    keys = synced["keys"]
    assert (keys["name"], keys["name_localizations"]["ja"]) == ("keys", "キー")
    assert keys["description_localizations"]["ja"] == "このサーバーのAPIキープールを管理します"
    assert "de" not in keys["name_localizations"]  # no catalog: Discord shows the English base
    add = next(o for o in keys["options"] if o["name"] == "add")
    provider = next(o for o in add["options"] if o["name"] == "provider")
    assert provider["name_localizations"]["ja"] == "プロバイダー"
    assert [c["value"] for c in provider["choices"]] == list(KNOWN_PROVIDERS)


async def test_bad_input_gets_a_localized_message_and_stores_nothing(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    async with running_bot(fake, bot) as run:
        unknown = await command(run, fake, "keys", sub("add", opt("provider", "mystery")))
        assert unknown.content == "Unknown provider `mystery`. Nothing was changed."
        form = await command(run, fake, "keys", sub("add", opt("provider", "openai")), locale="ja")
        assert form.data["title"] == "openai のキーを追加"
        empty = await submit_modal(run, fake, form, "   ", locale="ja")
        assert empty.content == "キーが空でした。何も保存していません。" and empty.ephemeral
        form = await command(run, fake, "keys", sub("add", opt("provider", "openai")))
        spaced = await submit_modal(run, fake, form, "sk with spaces")
        assert spaced.content.startswith("That does not look like an API key")
        assert await stored_keys(bot) == []
        form = await command(run, fake, "keys", sub("add", opt("provider", "openai")))
        await submit_modal(run, fake, form, "sk-dup-0001")
        form = await command(run, fake, "keys", sub("add", opt("provider", "openai")))
        dup = await submit_modal(run, fake, form, "sk-dup-0001")
        assert dup.content == "This key is already in the pool. Nothing was stored."
        assert len(await stored_keys(bot)) == 1
        missing = await command(run, fake, "keys", sub("remove", opt("provider", "openai"), opt("label", "nope")))
        assert missing.content == "No openai key labelled `nope` in this server's pool."


async def test_health_shown_masked_after_failures(fake_discord, bot_factory):
    from datetime import UTC, datetime, timedelta

    from bot import repo
    from bot.repo import KeyRef

    fake = fake_discord
    bot = bot_factory()
    async with running_bot(fake, bot) as run:
        form = await command(run, fake, "keys", sub("add", opt("provider", "deepseek")))
        await submit_modal(run, fake, form, "sk-ds-health-9f9f")
        (row,) = await stored_keys(bot)
        now = datetime.now(UTC)
        async with bot.sessions() as session, session.begin():
            await repo.record_key_failure(session, KeyRef("server", row.id), "rate_limit", now,
                                          now + timedelta(hours=1))
        listed = await command(run, fake, "keys", sub("list"), user=member(fake, "carol"))
    until = int((now + timedelta(hours=1)).timestamp())
    assert f"deepseek `key-1` \u20269f9f: 0 ok, 1 errors (last: rate_limit), cooling down until <t:{until}:R>" \
        in listed.content


def _walk(options, path=()):
    for option in options:
        yield path, option
        if option.get("type") in (1, 2):
            yield from _walk(option.get("options") or [], path + (option["name"],))


def _valid_name(name: str) -> bool:
    # Discord: ^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$ and lowercase where a case exists
    return 1 <= len(name) <= 32 and name == name.lower() and all(c.isalnum() or c in "-_'" for c in name)


async def test_every_synced_name_and_description_is_acceptable_to_discord(fake_discord, bot_factory):
    """The fake accepts anything; Discord rejects the whole sync for one bad localization."""
    fake = fake_discord
    async with running_bot(fake, bot_factory()):
        synced = fake.commands["global"]
    ours = [c for c in synced if c["name"] in {"keys", "model", "settings", "status", "personal"}]
    assert len(ours) == 5
    checked = 0
    for top in ours:
        entries = [((), top)] + list(_walk(top.get("options") or []))
        for _path, entry in entries:
            names = [entry["name"], *(entry.get("name_localizations") or {}).values()]
            descriptions = [entry["description"], *(entry.get("description_localizations") or {}).values()]
            assert all(_valid_name(n) for n in names), names
            assert all(1 <= len(d) <= 100 for d in descriptions), descriptions
            assert set(entry.get("name_localizations") or {}) <= {"en-US", "en-GB", "ja"}
            checked += 1
        # sibling names stay distinct in every locale
        for _path, entry in entries:
            children = entry.get("options") or []
            for locale in ("ja", None):
                shown = [(c.get("name_localizations") or {}).get(locale, c["name"]) if locale else c["name"]
                         for c in children]
                assert len(shown) == len(set(shown)), shown
    assert checked > 40


async def test_remove_offers_this_servers_labels_to_managers_only(fake_discord, bot_factory):
    from tests.support.drive_commands import MANAGE_SERVER, autocomplete

    fake = fake_discord
    bot = bot_factory()

    async def complete(permissions: str, typed: str) -> list[dict]:
        focused = {"type": 3, "name": "label", "value": typed, "focused": True}
        return await autocomplete(run, fake, "keys", sub("remove", opt("provider", "openai"), focused),
                                  permissions=permissions)

    async with running_bot(fake, bot) as run:
        for provider, secret, label in (("openai", "sk-o-000000-1111", "main"), ("openai", "sk-o-000000-2222", "spare"),
                                        ("google", "AIza-0000000-3333", "main")):
            form = await command(run, fake, "keys", sub("add", opt("provider", provider), opt("label", label)))
            await submit_modal(run, fake, form, secret)
        offered = await complete(MANAGE_SERVER, "")
        narrowed = await complete(MANAGE_SERVER, "spa")
        hidden = await complete(NO_PERMISSIONS, "")
    assert [(c["name"], c["value"]) for c in offered] == [("openai main \u20261111", "main"),
                                                         ("openai spare \u20262222", "spare")]
    assert [c["value"] for c in narrowed] == ["spare"]
    assert hidden == []
