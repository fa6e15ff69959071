"""Voice's seams: a voice message held to its bounds, heard or transcribed per model, its
transcript shown and kept (see the package docstring)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime

import discord

from bot.capabilities.voice.audio import MAX_VOICE_BYTES, bound_refusal
from bot.capabilities.voice.route import hears_voice, transcriber_of
from bot.capabilities.voice.storage import TranscriptWrite, VoiceTranscript, transcripts_of
from bot.capabilities.voice.transcripts import Hearing
from bot.question.context import Question
from bot.question.seams import AnswerPart, Ended, Joining
from providers.model_capabilities import ModelCapabilities
from providers.transcription import Transcriber
from providers.types import AudioPart, ChatRequest, content_parts
from stream.interrupt import Interrupt

log = logging.getLogger(__name__)

BOUND_NOTES = {"voice_too_long": "chat.voice.too_long", "voice_too_large": "chat.voice.too_large"}


def voice_attachments(message: discord.Message) -> list[discord.Attachment]:
    """The recording of a voice message (the message flag and the attachment's own shape)."""
    if not message.flags.voice:
        return []
    return [attachment for attachment in message.attachments if attachment.is_voice_message()]


class Voice:
    """Joins every answer (an earlier voice message of the conversation may need its words);
    holds the operator's transcription route, made on first use."""

    def __init__(self) -> None:
        self._transcriber: Transcriber | None = None
        self._made = False

    def join(self, joining: Joining) -> AnswerPart | None:
        question, settings = joining.question, joining.services.settings
        if not self._made:
            self._transcriber, self._made = transcriber_of(settings), True
        own = {attachment.id: message.id for message in (*question.earlier, question.message)
               for attachment in voice_attachments(message)}
        hearing = Hearing(question, self._transcriber, settings.VOICE_MAX_SECONDS, own)
        return VoicePart(hearing, joining)

    async def close(self) -> None:
        if self._transcriber is not None:
            await self._transcriber.aclose()


@dataclass
class VoicePart(AnswerPart):
    hearing: Hearing
    joining: Joining

    async def wait(self, interrupt: Interrupt) -> bool:
        """The question's own voice messages: one past the bounds, or a bot set up to hear
        none, is said in one line; a question with nothing else ends there."""
        question, hearing = self.joining.question, self.hearing
        own = [a for m in (*question.earlier, question.message) for a in voice_attachments(m)]
        if not own:
            return True
        refused = 0
        for attachment in own:
            reason = bound_refusal(attachment.duration, attachment.size, hearing.max_seconds)
            if reason is not None:
                refused += 1
                await question.reply(BOUND_NOTES[reason], seconds=hearing.max_seconds,
                                     voice_megabytes=MAX_VOICE_BYTES // (1024 * 1024))
        heard = hearing.transcriber is not None or hears_voice(self.joining.route)
        if not heard:
            await question.reply("chat.voice.not_set_up")
        return (heard and refused < len(own)) or bool(question.prompt) or _other_files(question)

    async def prepare(self, request: ChatRequest) -> ChatRequest:
        """The kept words of the conversation's voice messages, read once."""
        ids = {part.source_id for message in request.messages for part in content_parts(message.content)
               if isinstance(part, AudioPart)}
        sessions = self.joining.services.sessions
        if ids and sessions is not None:
            try:
                async with sessions() as session:
                    self.hearing.transcripts.update(await transcripts_of(session, ids))
            except Exception:  # noqa: BLE001 - best effort: without them, they are transcribed again
                log.exception("reading the kept voice transcripts failed")
        return request

    async def for_attempt(self, request: ChatRequest, capabilities: ModelCapabilities, paid_by: str) -> ChatRequest:
        return await self.hearing.for_model(request, capabilities)

    async def books(self, ended: Ended) -> None:
        """Each transcript made here is kept, with its seconds."""
        writes, question = self.joining.services.writes, ended.question
        if writes is None or not self.hearing.made:
            return
        now = datetime.now(UTC)
        for made in self.hearing.made:
            writes.put(TranscriptWrite(VoiceTranscript(
                attachment_id=made.attachment_id, message_id=made.message_id, user_id=question.asker_id,
                guild_id=question.where.guild_id, words=made.words, seconds=made.seconds, created_at=now)))


def _other_files(question: Question) -> bool:
    """The question carries a file that is not a voice message's recording."""
    return any(not attachment.is_voice_message()
               for message in (*question.earlier, question.message) for attachment in message.attachments)
