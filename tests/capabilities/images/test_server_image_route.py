"""A server's own image route through the real bot (fake Discord, fake image provider):
`/model image set` draws the server's images with the server's key for that provider (the
Authorization the fake saw), counts the image as that key's success, shows in /status,
and `clear` goes back to the operator's route; `/usage` shows the images of each route
(the operator's priced at IMAGE_PRICE); a provider without a stored key says so
when set and refuses /imagine in one line with nothing asked; a member may not set it; a
server with its own route draws even where the operator named none."""

from __future__ import annotations

from bot import repo
from tests.capabilities.images.conftest import image_route
from tests.capabilities.images.test_imagine import finished, imagine, posted
from tests.support.drive_commands import command, discord_text, group, opt, sub
from tests.support.drive_discord_client import running_bot
from tests.support.env_bot_config import server_keys
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_image_provider import IMAGE_KEY, FakeImageProvider

SEND = str((1 << 10) | (1 << 11))
SERVER_KEY = "sk-server-image-0042"


async def model_image(run, fake: FakeDiscord, action: str, *options, **kwargs):
    return await command(run, fake, "model", group("image", sub(action, *options)), **kwargs)


async def server_endpoint_and_key(bot, fake: FakeDiscord, image_provider: FakeImageProvider) -> None:
    """The server's custom endpoint (its text route's address) on the fake, and its custom key."""
    guild = int(fake.guild_id)
    async with bot.sessions() as session, session.begin():
        await repo.set_custom_endpoint(session, guild, image_provider.base_url, "text-model")
        await repo.add_server_key(session, bot.vault, guild, "custom", SERVER_KEY)
    image_provider.keys.add(SERVER_KEY)


async def test_the_servers_route_draws_with_the_servers_key_until_cleared(
        fake_discord: FakeDiscord, bot_factory, image_provider: FakeImageProvider) -> None:
    fake = fake_discord
    bot = bot_factory(**image_route(image_provider, ALLOW_PRIVATE_ENDPOINTS="true", IMAGE_PRICE="0.04"))
    async with running_bot(fake, bot) as run:
        await server_endpoint_and_key(bot, fake, image_provider)
        member = await model_image(run, fake, "set", opt("provider", "custom"), opt("model", "gpt-image-1"),
                                   permissions=SEND)
        done = await model_image(run, fake, "set", opt("provider", "custom"), opt("model", "gpt-image-1"))
        status = await command(run, fake, "status")
        await imagine(run, fake, "a lighthouse")
        await finished(run, fake, 1)
        cleared = await model_image(run, fake, "clear")
        again = await model_image(run, fake, "clear")
        await imagine(run, fake, "a second lighthouse")
        await finished(run, fake, 2)
        keys = await server_keys(bot)
        usage = await command(run, fake, "usage")
    assert member.ephemeral and "Manage Server" in member.content
    assert done.content == discord_text(fake, "commands.reply.image_route_set", provider="custom", model="gpt-image-1")
    assert "Images: on, drawn on this server's route custom `gpt-image-1`." in status.content
    first, second = image_provider.requests
    assert first.path == "/v1/images/generations" and first.fields["model"] == "gpt-image-1"
    assert first.headers["Authorization"] == f"Bearer {SERVER_KEY}"  # the server's key, not the operator's
    assert keys["0042"].successes == 1
    assert cleared.content == discord_text(fake, "commands.reply.image_route_cleared")
    assert again.content == discord_text(fake, "commands.reply.image_route_none")
    assert second.headers["Authorization"] == f"Bearer {IMAGE_KEY}"  # the operator's again
    assert len(posted(fake)) == 2
    assert usage.content.splitlines()[-3:] == [
        discord_text(fake, "commands.reply.usage_images_header"),
        discord_text(fake, "commands.reply.usage_images_line_priced", provider="custom", model="gpt-image-1",
                     keys="the bot's own route", today=1, period=1, days=30, cost="0.04"),
        discord_text(fake, "commands.reply.usage_images_line", provider="custom", model="gpt-image-1",
                     keys="this server's keys", today=1, period=1, days=30)]


async def test_a_provider_without_a_stored_key_says_so_and_draws_nothing(
        fake_discord: FakeDiscord, bot_factory, image_provider: FakeImageProvider) -> None:
    fake = fake_discord
    bot = bot_factory(**image_route(image_provider))
    async with running_bot(fake, bot) as run:
        done = await model_image(run, fake, "set", opt("provider", "openai"), opt("model", "gpt-image-1"))
        refused = await imagine(run, fake, "a lighthouse")
        no_endpoint = await model_image(run, fake, "set", opt("provider", "custom"), opt("model", "flux"))
        unknown = await model_image(run, fake, "set", opt("provider", "anthropic"), opt("model", "claude"))
        bad_model = await model_image(run, fake, "set", opt("provider", "google"), opt("model", "two words"))
    assert done.content.splitlines() == [
        discord_text(fake, "commands.reply.image_route_set", provider="openai", model="gpt-image-1"),
        discord_text(fake, "commands.reply.image_route_no_key", provider="openai")]
    assert refused.ephemeral
    assert refused.content == discord_text(fake, "commands.imagine.no_server_key", provider="openai")
    assert no_endpoint.content.splitlines()[1] == discord_text(fake, "commands.reply.image_route_no_endpoint")
    assert unknown.content == discord_text(fake, "commands.error.unknown_provider", provider="anthropic")
    assert bad_model.content == discord_text(fake, "commands.error.bad_model")
    assert image_provider.requests == [] and posted(fake) == []


async def test_a_server_with_its_own_route_draws_where_the_operator_named_none(
        fake_discord: FakeDiscord, bot_factory, image_provider: FakeImageProvider) -> None:
    fake = fake_discord
    bot = bot_factory(ALLOW_PRIVATE_ENDPOINTS="true")
    async with running_bot(fake, bot) as run:
        before = await imagine(run, fake, "a harbour")
        await server_endpoint_and_key(bot, fake, image_provider)
        await model_image(run, fake, "set", opt("provider", "custom"), opt("model", "gpt-image-1"))
        await imagine(run, fake, "a harbour")
        await finished(run, fake, 1)
    assert before.content == discord_text(fake, "commands.imagine.no_route")
    assert [seen.headers["Authorization"] for seen in image_provider.requests] == [f"Bearer {SERVER_KEY}"]
    assert len(posted(fake)) == 1


async def test_the_servers_custom_address_is_held_to_the_private_address_rule(
        fake_discord: FakeDiscord, bot_factory, image_provider: FakeImageProvider) -> None:
    """The fake listens on loopback: without ALLOW_PRIVATE_ENDPOINTS a server's address
    there is refused at the request (as its text route's is), and nothing reaches it."""
    fake = fake_discord
    bot = bot_factory(**image_route(image_provider))  # the operator's own address may be private
    async with running_bot(fake, bot) as run:
        await server_endpoint_and_key(bot, fake, image_provider)
        await model_image(run, fake, "set", opt("provider", "custom"), opt("model", "gpt-image-1"))
        await imagine(run, fake, "a lighthouse")
        await finished(run, fake, 1)
    outcome = [m.content for m in fake.bot_messages(ephemeral=True) if m.history and m.content != m.history[0]]
    assert outcome == [discord_text(fake, "chat.images.failed_refused")]
    assert image_provider.requests == [] and posted(fake) == []


async def test_images_rotate_through_the_servers_keys(
        fake_discord: FakeDiscord, bot_factory, image_provider: FakeImageProvider) -> None:
    fake = fake_discord
    bot = bot_factory(ALLOW_PRIVATE_ENDPOINTS="true")
    other = "sk-server-image-0077"
    async with running_bot(fake, bot) as run:
        await server_endpoint_and_key(bot, fake, image_provider)
        async with bot.sessions() as session, session.begin():
            await repo.add_server_key(session, bot.vault, int(fake.guild_id), "custom", other)
        image_provider.keys.add(other)
        await model_image(run, fake, "set", opt("provider", "custom"), opt("model", "gpt-image-1"))
        for count, prompt in enumerate(("a bay", "a cove", "a cape"), start=1):
            await imagine(run, fake, prompt)
            await finished(run, fake, count)
    used = [seen.headers["Authorization"].removeprefix("Bearer ") for seen in image_provider.requests]
    assert len(used) == 3 and used[0] != used[1] and used[2] == used[0]
    assert set(used) == {SERVER_KEY, other}


async def test_a_refused_server_key_is_the_keys_error_and_costs_the_member_nothing(
        fake_discord: FakeDiscord, bot_factory, image_provider: FakeImageProvider, caplog) -> None:
    fake = fake_discord
    bot = bot_factory(ALLOW_PRIVATE_ENDPOINTS="true", IMAGES_PER_DAY="1")
    async with running_bot(fake, bot) as run:
        await server_endpoint_and_key(bot, fake, image_provider)
        image_provider.keys.discard(SERVER_KEY)  # the provider no longer takes it
        await model_image(run, fake, "set", opt("provider", "custom"), opt("model", "gpt-image-1"))
        await imagine(run, fake, "a reef")
        await finished(run, fake, 1)
        image_provider.keys.add(SERVER_KEY)
        await imagine(run, fake, "a reef")  # the day's one image was given back
        await finished(run, fake, 2)
        keys = await server_keys(bot)
    outcome = [m.content for m in fake.bot_messages(ephemeral=True) if m.history and m.content != m.history[0]]
    assert outcome == [discord_text(fake, "chat.images.failed_key"), discord_text(fake, "commands.imagine.done")]
    assert (keys["0042"].errors, keys["0042"].successes) == (1, 1)
    assert SERVER_KEY not in str(outcome) and SERVER_KEY not in caplog.text
