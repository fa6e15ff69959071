"""Where a catch-up goes: the command's own (ephemeral) response, or the channel.

`InteractionSink` is a `MessageSink` over an interaction's webhook: the answer's first
message is the command's response (the "thinking…" the command was deferred with), the
next ones are follow-ups, all ephemeral as the response is. Interaction webhooks do not
count against the bot's global request limit, and need no channel permission. Their
token lasts 15 minutes, far longer than an answer's own deadline; past it Discord
answers 404, which the delivery reads as a message gone and then a place gone.

`CatchUpDelivery` is the question's `Delivery` (`bot.question.context`): who asked, a
refusal as the response's text, and the answer's sink — the interaction's, or with
`public` a channel answer like any other (no reply: there is no message to reply to,
and no buttons: there is no question message to answer again).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any

import discord

from bot.capabilities.catchup.transcript import Said
from bot.edge.embeds import embed_from_spec
from bot.edge.sink import NO_MENTIONS, DiscordMessageSink, sink_errors
from stream.sink import FINAL, EmbedSpec, RateLimitInfo, SentMessage, SinkError, Write


class InteractionSink:
    """An answer delivered through `interaction`'s webhook: the response first, then follow-ups."""

    def __init__(self, interaction: discord.Interaction, original: SentMessage) -> None:
        self.interaction = interaction
        self.original = original
        self.used = False  # the response holds part of the answer

    async def _post(self, **kwargs: Any) -> SentMessage:
        if not self.used:  # the deferred response becomes the answer's first message
            self.used = True
            await self._edit(self.original.id, **kwargs)
            return self.original
        with sink_errors(editing=False):
            sent = await self.interaction.followup.send(ephemeral=True, wait=True, allowed_mentions=NO_MENTIONS,
                                                        **kwargs)
        return SentMessage(sent.id, self.original.channel_id)

    async def _edit(self, message_id: int, **kwargs: Any) -> None:
        with sink_errors(editing=True):
            if message_id == self.original.id:
                await self.interaction.edit_original_response(allowed_mentions=NO_MENTIONS, **kwargs)
            else:
                await self.interaction.followup.edit_message(message_id, allowed_mentions=NO_MENTIONS, **kwargs)

    async def send(self, content: str, *, reply: bool = False, write: Write = FINAL) -> SentMessage:
        return await self._post(content=content)

    async def edit(self, message: SentMessage, content: str, *, write: Write = FINAL) -> None:
        await self._edit(message.id, content=content)

    async def delete(self, message: SentMessage) -> None:
        """A superseded part: the response is emptied (it cannot go), a follow-up deleted."""
        if message.id == self.original.id:
            await self._edit(message.id, content="\u200b")
            self.used = False  # the next part takes the response again
            return
        try:
            with sink_errors(editing=True):
                await self.interaction.followup.delete_message(message.id)
        except SinkError:
            pass  # already gone is what we wanted

    async def send_embed(self, embed: EmbedSpec, *, reply: bool = False) -> SentMessage:
        return await self._post(embed=embed_from_spec(embed))

    async def send_file(self, filename: str, data: bytes, *, embed: EmbedSpec | None = None) -> SentMessage:
        file = discord.File(io.BytesIO(data), filename=filename)
        extra: dict[str, Any] = {"embed": embed_from_spec(embed)} if embed is not None else {}
        if not self.used:  # an edit of the response takes files as its attachments
            return await self._post(attachments=[file], **extra)
        return await self._post(file=file, **extra)

    async def typing(self) -> None:
        return None  # the response shows "thinking…" until the first words

    def rate_limit(self) -> RateLimitInfo | None:
        return None  # interaction webhooks have no channel bucket to pace by

    def close(self) -> None:
        return None


@dataclass
class CatchUpDelivery:
    """One /catchup: the interaction, what was read, and where the summary goes."""

    interaction: discord.Interaction
    original: SentMessage  # the deferred response
    read: list[Said]
    public: bool = False
    told: bool = False  # a line was said to the asker (a refusal)
    sinks: list[InteractionSink | DiscordMessageSink] = field(default_factory=list)
    response: discord.Message | None = None  # the deferred response as discord.py read it

    @property
    def asker(self) -> discord.Member | discord.User:
        return self.interaction.user

    @property
    def channel(self) -> discord.abc.Messageable:
        channel = self.interaction.channel
        assert channel is not None and isinstance(channel, discord.abc.Messageable)
        return channel

    async def tell(self, text: str) -> None:
        """The line replaces "thinking…"; once the answer holds the response, a follow-up."""
        self.told = True
        private = next((s for s in self.sinks if isinstance(s, InteractionSink)), None)
        try:
            if private is not None and private.used:
                await self.interaction.followup.send(text, ephemeral=True, allowed_mentions=NO_MENTIONS)
            else:
                await self.interaction.edit_original_response(content=text, allowed_mentions=NO_MENTIONS)
        except discord.HTTPException:
            pass  # the member's token expired or Discord failed: a refusal is not worth more

    def sink(self, client: discord.Client) -> InteractionSink | DiscordMessageSink:
        made: InteractionSink | DiscordMessageSink
        if self.public:
            made = DiscordMessageSink(self.channel, client=client, typing=True)
        else:
            made = InteractionSink(self.interaction, self.original)
        self.sinks.append(made)
        return made
