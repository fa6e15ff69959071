"""What the bot answers and what the model is shown: which messages address the bot,
and the request built from a question and the conversation before it.

`build_request` is the one place a question becomes a `ChatRequest`: the conversation
before it (`bot.history`: the reply chain with whole split answers, or a DM's recent
messages), the question itself, and the operator's output-token cap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord

from bot.attachments import question_message
from bot.history import History, conversation_history, speaker, strip_bot_mention
from bot.persona import system_prompt
from bot.usage.params import with_server_params
from providers import ChatRequest

if TYPE_CHECKING:
    from bot.app import LLMBot

ANSWERED_TYPES = (discord.MessageType.default, discord.MessageType.reply)
__all__ = ["ANSWERED_TYPES", "addresses_bot", "build_request", "strip_bot_mention"]


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


async def build_request(bot: LLMBot, message: discord.Message, prompt: str,
                        history: History | None = None) -> ChatRequest:
    """The request for `message` (whose text without the mention is `prompt`); `history`
    when the caller gathered it already (`bot.history`: it also says what was left out)."""
    bot_id = bot.user.id if bot.user is not None else 0
    if history is None:
        history = await conversation_history(bot, message)
    question = await question_message(message, history.sources, prompt, bot_id)  # with its files
    question.name = speaker(message)  # who asks, in a server
    request = ChatRequest(messages=[*history.messages, question], system=await system_prompt(bot, message),
                          max_output_tokens=bot.settings.MAX_OUTPUT_TOKENS)
    return await with_server_params(bot.sessions, message.guild.id if message.guild else None, request)
