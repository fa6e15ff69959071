"""Asking the bot through the fake Discord and reading what the replay provider received:
the helpers memory's turn and command tests share."""

from __future__ import annotations

import json
from typing import Any

from bot.capabilities.memory.tool import REMEMBER_TOOL
from tests.support.check_answers import INDICATOR
from tests.support.data_openai import chunk, tool_delta
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer, Reply


def remember_call(fact: str) -> Reply:
    """The model's turn that calls `remember` once."""
    return Reply.sse([chunk({"role": "assistant", "content": ""}),
                      chunk({"tool_calls": [tool_delta(0, id="call_1", name=REMEMBER_TOOL,
                                                       arguments=json.dumps({"fact": fact}))]}),
                      chunk({}, "tool_calls")])


def operator_bot(turn_bot, server: ProviderReplayServer):
    """Every server and DM answered on the operator's default route (the replay server)."""
    return turn_bot(DEFAULT_TEXT_PROVIDER="custom", DEFAULT_TEXT_MODEL="memory-model",
                    DEFAULT_TEXT_BASE_URL=f"{server.url}/v1", DEFAULT_TEXT_API_KEYS="sk-operator-1")


def answered(fake: FakeDiscord, channel_id: str, count: int) -> bool:
    found = [m for m in fake.bot_messages(channel_id, ephemeral=False) if m.content and not m.deleted]
    return len(found) >= count and not any(INDICATOR in m.content for m in found)


def shown(fake: FakeDiscord, channel_id: str) -> list[str]:
    return [m.content for m in fake.bot_messages(channel_id, ephemeral=False) if m.content and not m.deleted]


def system_of(body: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in body["messages"] if m["role"] == "system")


def tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools", [])]


async def ask(run, fake: FakeDiscord, text: str, count: int, *, channel_id: str | None = None,
              dm: bool = False, author: dict[str, Any] | None = None) -> None:
    """Ask the bot and wait for its `count`th answer in that channel."""
    where = fake.dm_channel_id if dm else channel_id or fake.channel_id
    content = text if dm else f"<@{fake.bot_user['id']}> {text}"
    await fake.send_user_message(content, mention_bot=not dm, dm=dm, channel_id=None if dm else where,
                                 author=author)
    await run.wait_for(lambda: answered(fake, where, count))
