"""What the bot answers and what the model is shown: which messages address the bot,
and the request built from a question and the conversation before it.

`build_request` is the one place a question becomes a `ChatRequest`: history from the
reply chain, the question itself, and the operator's output-token cap.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import discord

from providers import ChatRequest, Message

if TYPE_CHECKING:
    from bot.app import LLMBot

MAX_CHAIN = 6  # earlier messages of the reply chain sent as history
ANSWERED_TYPES = (discord.MessageType.default, discord.MessageType.reply)


def strip_bot_mention(content: str, bot_id: int) -> str:
    """The prompt without `<@bot>` / `<@!bot>` mentions, whitespace collapsed at the ends."""
    return re.sub(rf"<@!?{bot_id}>", " ", content).strip()


def addresses_bot(message: discord.Message, bot_user: discord.abc.User) -> bool:
    """A human's message that mentions the bot, replies to it, or is a DM."""
    if message.author.bot or message.type not in ANSWERED_TYPES:
        return False
    if message.guild is None:
        return True
    if any(user.id == bot_user.id for user in message.mentions):
        return True
    resolved = message.reference.resolved if message.reference is not None else None
    return isinstance(resolved, discord.Message) and resolved.author.id == bot_user.id


def chain_messages(chain: list[discord.Message], bot_id: int) -> list[Message]:
    """Earlier messages (oldest first) as history; it starts with a user turn, as providers want."""
    history = [
        Message("assistant" if m.author.id == bot_id else "user", strip_bot_mention(m.content, bot_id))
        for m in chain
    ]
    history = [m for m in history if m.content]
    while history and history[0].role == "assistant":
        history.pop(0)
    return history


async def reply_chain(message: discord.Message, limit: int = MAX_CHAIN) -> list[discord.Message]:
    """The messages `message` replies to, transitively, oldest first (at most `limit`)."""
    chain: list[discord.Message] = []
    reference = message.reference
    while reference is not None and reference.message_id is not None and len(chain) < limit:
        previous = reference.resolved if isinstance(reference.resolved, discord.Message) else None
        if previous is None:
            try:
                previous = await message.channel.fetch_message(reference.message_id)
            except discord.HTTPException:
                break
        chain.append(previous)
        reference = previous.reference
    chain.reverse()
    return chain


async def build_request(bot: LLMBot, message: discord.Message, prompt: str) -> ChatRequest:
    """The request for `message` (whose text without the mention is `prompt`)."""
    bot_id = bot.user.id if bot.user is not None else 0
    history = chain_messages(await reply_chain(message), bot_id)
    return ChatRequest(messages=[*history, Message("user", prompt)],
                       max_output_tokens=bot.settings.MAX_OUTPUT_TOKENS)
