"""One answer's voice messages as each attempt's model takes them: the audio for a model
that hears it, else the words (transcribed once per answer, shown to the member once),
else a line saying the model cannot hear it.

An earlier message's voice message whose transcript is kept (`storage.py`) is its words
for every model: the conversation's history holds what was said, not the recording.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field

from bot.capabilities.voice.notes import show_transcript
from bot.question.context import Question
from providers.model_capabilities import ModelCapabilities
from providers.transcription import Recording, Transcriber, TranscriptionFailed
from providers.types import AudioPart, ChatRequest, ContentPart, Message, TextPart

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Transcribed:
    """A transcript made in this answer, to keep: whose message, how long it was."""

    attachment_id: int
    message_id: int
    words: str
    seconds: float


def spoken(words: str) -> TextPart:
    """What a model reads for a voice message it does not hear."""
    if not words:
        return TextPart("[The voice message was transcribed: it holds no words.]")
    return TextPart(f"(transcribed) {words}")


@dataclass
class Hearing:
    """The voice messages of one answer: `own` are the question's own (attachment id ->
    message id), `transcripts` the words known (kept ones included), `made` the ones
    transcribed here."""

    question: Question
    transcriber: Transcriber | None
    max_seconds: int
    own: dict[int, int]
    transcripts: dict[int, str] = field(default_factory=dict)
    made: list[Transcribed] = field(default_factory=list)
    failed: set[int] = field(default_factory=set)

    async def for_model(self, request: ChatRequest, capabilities: ModelCapabilities) -> ChatRequest:
        """The request with each audio part as this model takes it (unchanged without one)."""
        if not any(isinstance(part, AudioPart) for message in request.messages for part in _parts(message)):
            return request
        messages = [await self._message(message, capabilities) for message in request.messages]
        return dataclasses.replace(request, messages=messages)

    async def _message(self, message: Message, capabilities: ModelCapabilities) -> Message:
        parts = _parts(message)
        if not any(isinstance(part, AudioPart) for part in parts):
            return message
        heard = [await self._part(part, capabilities) if isinstance(part, AudioPart) else part for part in parts]
        return dataclasses.replace(message, content=heard)

    async def _part(self, part: AudioPart, capabilities: ModelCapabilities) -> ContentPart:
        if part.seconds > self.max_seconds:
            return TextPart(f"[The voice message is longer than {self.max_seconds} s: it was not heard.]")
        kept = self.transcripts.get(part.source_id)
        if kept is not None and part.source_id not in self.own:
            return spoken(kept)  # an earlier message: its words, whatever the model
        if part.media_type in capabilities.audio:
            return part
        words = await self._transcript(part)
        return TextPart(part.text) if words is None else spoken(words)

    async def _transcript(self, part: AudioPart) -> str | None:
        """The part's words: known, or transcribed now (the member sees their own in the
        quote line); None when there is no route or it failed."""
        known = self.transcripts.get(part.source_id)
        if known is not None or self.transcriber is None or part.source_id in self.failed:
            return known
        try:
            words = await self.transcriber.transcribe(Recording(part.filename, part.data, part.media_type))
        except TranscriptionFailed as exc:
            log.warning("a voice message could not be transcribed: %s", exc.reason)
            self.failed.add(part.source_id)
            if part.source_id in self.own:
                await self.question.reply("chat.voice.not_transcribed")
            return None
        self.transcripts[part.source_id] = words
        message_id = self.own.get(part.source_id)
        if message_id is not None:
            self.made.append(Transcribed(part.source_id, message_id, words, part.seconds))
            await show_transcript(self.question, words)
        return words


def _parts(message: Message) -> list[ContentPart]:
    return [] if isinstance(message.content, str) else list(message.content)
