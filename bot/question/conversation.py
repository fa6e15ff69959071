"""What the bot answers and what the model is shown: which messages address the bot,
and the request built from a question and the conversation before it.

`build_request` is the one place a question becomes a `ChatRequest`: the conversation
before it (`bot.question.history`: the reply chain with whole split answers, or a DM's recent
messages), the question itself, the persona, the server's generation settings and the
operator's output-token cap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord

from bot.capabilities.reading.attachments import question_message
from bot.question.history import History, strip_bot_mention
from bot.question.persona import persona_channel_id, system_prompt
from bot.usage.params import apply_params
from providers import ChatRequest

if TYPE_CHECKING:
    from bot.question.context import Question

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


async def build_request(question: Question, history: History, max_output_tokens: int,
                        bot_name: str) -> ChatRequest:
    """The request for `question`: the conversation before it (`history`, which also says
    what was left out), the question with its files, the persona as the system prompt and
    the server's generation settings, all from the question's one configuration read. A
    batch's earlier messages bring their files as the chain's do. The question's turn is
    the request's last message (capabilities add to it: `bot.question.seams`)."""
    message = question.message
    chain = [*history.sources, *question.earlier]
    turn = await question_message(message, chain, question.prompt, question.bot_id, question.reads)  # with its files
    turn.name = question.asker.display_name if message.guild is not None else None  # who asks, in a server
    server = question.config.server
    persona = server.persona(persona_channel_id(message.channel)) if server is not None and message.guild else None
    system = system_prompt(message, persona, bot_name, question.asker)
    request = ChatRequest(messages=[*history.messages, turn], system=system,
                          max_output_tokens=max_output_tokens)
    return apply_params(request, server.params) if server is not None and message.guild else request
