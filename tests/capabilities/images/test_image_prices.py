"""What a server pays per image on its own route (`/model image price`), through the real
bot: its images show in `/usage` with their cost, the price stays with the model when the
route moves on (images drawn before keep it, a new model is unpriced until priced), the
price defaults to the route's model, a server without a route of its own is told to name
one, and a member may not set it; the member's `/personal usage` counts those images without
the operator's IMAGE_PRICE. And in storage, on SQLite and PostgreSQL: a price is
refused outside its bounds, and a server prices at most `MAX_IMAGE_PRICES` models
(changing one of them still works)."""

from __future__ import annotations

import pytest

from bot.capabilities.images.route_storage import MAX_IMAGE_PRICES, image_prices_of, set_image_price
from bot.repo.common import RepositoryError
from tests.capabilities.images.test_imagine import finished, imagine
from tests.capabilities.images.test_server_image_route import (
    SERVER_KEY,
    model_image,
    server_endpoint_and_key,
)
from tests.support.drive_commands import command, discord_text, opt, sub
from tests.support.drive_discord_client import running_bot
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_image_provider import FakeImageProvider

GUILD = 8001
SEND = str((1 << 10) | (1 << 11))


def server_line(fake: FakeDiscord, model: str, count: int, cost: str | None = None) -> str:
    params = {"provider": "custom", "model": model, "keys": "this server's keys", "today": count,
              "period": count, "days": 30}
    if cost is None:
        return discord_text(fake, "commands.reply.usage_images_line", **params)
    return discord_text(fake, "commands.reply.usage_images_line_priced", cost=cost, **params)


async def test_a_priced_route_shows_its_images_cost_and_the_price_stays_with_the_model(
        fake_discord: FakeDiscord, bot_factory, image_provider: FakeImageProvider) -> None:
    fake = fake_discord
    bot = bot_factory(ALLOW_PRIVATE_ENDPOINTS="true", IMAGE_PRICE="0.04")
    async with running_bot(fake, bot) as run:
        no_route = await model_image(run, fake, "price", opt("per_image", 0.05))
        await server_endpoint_and_key(bot, fake, image_provider)
        await model_image(run, fake, "set", opt("provider", "custom"), opt("model", "gpt-image-1"))
        member = await model_image(run, fake, "price", opt("per_image", 9.0), permissions=SEND)
        priced = await model_image(run, fake, "price", opt("per_image", 0.05))
        for count, prompt in enumerate(("a bay", "a cove"), start=1):
            await imagine(run, fake, prompt)
            await finished(run, fake, count)
        await model_image(run, fake, "set", opt("provider", "custom"), opt("model", "gpt-image-1-mini"))
        await imagine(run, fake, "a cape")
        await finished(run, fake, 3)
        unpriced = await command(run, fake, "usage")
        named = await model_image(run, fake, "price", opt("per_image", 0.5), opt("model", "gpt-image-1-mini"))
        usage = await command(run, fake, "usage")
        personal = await command(run, fake, "personal", sub("usage"), permissions=SEND)
    assert no_route.content == discord_text(fake, "commands.reply.image_price_no_route")
    assert member.ephemeral and "Manage Server" in member.content
    assert priced.content == discord_text(fake, "commands.reply.image_price_set", model="gpt-image-1", price="0.05")
    assert named.content == discord_text(fake, "commands.reply.image_price_set", model="gpt-image-1-mini", price="0.5")
    header = discord_text(fake, "commands.reply.usage_images_header")
    assert unpriced.content.splitlines()[-3:] == [
        header, server_line(fake, "gpt-image-1", 2, "0.10"), server_line(fake, "gpt-image-1-mini", 1)]
    assert usage.content.splitlines()[-3:] == [
        header, server_line(fake, "gpt-image-1", 2, "0.10"), server_line(fake, "gpt-image-1-mini", 1, "0.50")]
    assert [r.headers["Authorization"] for r in image_provider.requests] == [f"Bearer {SERVER_KEY}"] * 3
    # The member's own usage counts the images, but IMAGE_PRICE prices only the operator's route.
    assert personal.content.endswith("\nImages drawn: 3 today, 3 in 30 days")


async def test_a_server_prices_at_most_so_many_models_and_may_change_each(sessions) -> None:
    async with sessions() as session, session.begin():
        for n in range(MAX_IMAGE_PRICES):
            assert await set_image_price(session, GUILD, f"model-{n}", 0.01 * n)
        refused = await set_image_price(session, GUILD, "one-more", 1.0)
        changed = await set_image_price(session, GUILD, "model-3", 2.5)
    async with sessions() as session:
        prices = await image_prices_of(session, GUILD)
    assert refused is False and changed is True
    assert len(prices) == MAX_IMAGE_PRICES and "one-more" not in prices and prices["model-3"] == 2.5


@pytest.mark.parametrize(("model", "price", "code"), [
    ("gpt-image-1", -0.01, "bad_price"), ("gpt-image-1", float("nan"), "bad_price"),
    ("gpt-image-1", 1e7, "bad_price"), ("two words", 0.04, "bad_model"), ("", 0.04, "bad_model")])
async def test_a_bad_price_or_model_is_refused_and_nothing_is_stored(sessions, model, price, code) -> None:
    with pytest.raises(RepositoryError) as refused:
        async with sessions() as session, session.begin():
            await set_image_price(session, GUILD, model, price)
    async with sessions() as session:
        assert await image_prices_of(session, GUILD) == {}
    assert refused.value.code == code
