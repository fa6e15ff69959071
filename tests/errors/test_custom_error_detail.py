"""A custom endpoint's own error words stay out of the public error embed and go only to
the managers' thought-log channel (issue 11): the real LLMBot and discord.py against the
fake Discord, the replay provider answering the custom endpoint with an error body."""

from __future__ import annotations

import json

import pytest

from bot import repo
from providers.i18n import t
from tests.support.check_answers import answer_embeds
from tests.support.data_errors import openai_error
from tests.support.drive_discord_client import llmbot_factory, running_bot
from tests.support.env_bot_config import configure_server
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer

# What an internal service behind a manager-typed address might say; nothing secret-like,
# so redaction leaves it whole and only the routing decides where it shows.
CANARY = "intranet-zebra-lantern-canary"
ENDPOINT_ERROR = openai_error(400, f"Bad request: see internal page {CANARY} for the admin panel",
                              kind="invalid_request_error")


@pytest.fixture
def make_bot(tmp_path):
    make = llmbot_factory(tmp_path, "detail.sqlite3")
    return lambda **env: make(ALLOW_PRIVATE_ENDPOINTS="true", **env)  # the replay server is on loopback


def bot_messages_everywhere(fake: FakeDiscord, channel_ids: tuple[str, ...]) -> str:
    """Everything the bot posted in these channels (content, embeds as sent), as one text."""
    return json.dumps([(m.content, m.embeds) for cid in channel_ids for m in fake.bot_messages(cid)])


async def answer_fully(run, fake: FakeDiscord, text: str) -> None:
    """Ask the bot and wait until the whole answer is over, its bookkeeping (the
    thought-log step) included: the answer leaves the running answers last."""
    posted = await fake.send_user_message(f"<@{fake.bot_user['id']}> {text}", mention_bot=True)
    answers = run.bot.answers
    await run.wait_for(lambda: answer_embeds(fake) and not any(
        a.question_id == int(posted.id) for a in answers.all()))


async def failed_answer(fake: FakeDiscord, server: ProviderReplayServer, bot, *, thought_log: bool,
                        custom: bool = True) -> dict:
    """One answer that the endpoint refuses with `ENDPOINT_ERROR`; its public error embed."""
    server.reply(ENDPOINT_ERROR)
    async with running_bot(fake, bot) as run:
        if custom:
            await configure_server(bot, fake, server, keys=("sk-custom-one",))
        if thought_log:
            async with bot.sessions() as session, session.begin():
                await repo.set_thought_log_channel(session, int(fake.guild_id), int(fake.thought_channel_id))
        await answer_fully(run, fake, "what does the endpoint say?")
    [embed] = answer_embeds(fake)
    assert embed.get("title") and len(server.requests) == 1
    return embed


async def test_the_endpoints_words_reach_the_thought_log_and_not_the_public_embed(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, make_bot) -> None:
    fake = fake_discord
    embed = await failed_answer(fake, provider_server, make_bot(), thought_log=True)
    assert CANARY not in json.dumps(embed)
    assert CANARY not in bot_messages_everywhere(fake, (fake.channel_id,))
    [post] = fake.bot_messages(fake.thought_channel_id)
    [detail] = post.embeds
    assert detail["title"] == t("chat.thought_log.error_detail_title", "en")
    assert CANARY in detail["description"]


async def test_without_a_thought_log_channel_the_words_are_shown_nowhere(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, make_bot) -> None:
    fake = fake_discord
    await failed_answer(fake, provider_server, make_bot(), thought_log=False)
    everywhere = bot_messages_everywhere(fake, (fake.channel_id, fake.thought_channel_id, fake.dm_channel_id))
    assert CANARY not in everywhere
    assert fake.bot_messages(fake.thought_channel_id) == []


async def test_a_hosted_providers_words_stay_in_the_public_embed(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, make_bot) -> None:
    """The other direction: only a custom endpoint's words are held back."""
    server = provider_server
    bot = make_bot(DEFAULT_TEXT_PROVIDER="openai", DEFAULT_TEXT_MODEL="gpt-4o-mini",
                   DEFAULT_TEXT_BASE_URL=f"{server.url}/v1", DEFAULT_TEXT_API_KEYS="sk-env-hosted")
    embed = await failed_answer(fake_discord, server, bot, thought_log=True, custom=False)
    assert CANARY in json.dumps(embed)
