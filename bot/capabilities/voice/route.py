"""The transcription route the operator set (DEFAULT_TRANSCRIBE_*), and whether a turn's
route has a model that hears a voice message as it is."""

from __future__ import annotations

from bot.capabilities.voice.audio import VOICE_MEDIA_TYPE
from bot.capabilities.voice.environment import VoiceEnvironment
from bot.turn import TurnRoute
from providers.capabilities import capabilities_of
from providers.transcription import Transcriber


def transcriber_of(settings: VoiceEnvironment) -> Transcriber | None:
    """The operator's transcription route, or None when none is set (its settings were
    checked at start-up: a named provider has its model, address and keys)."""
    provider, model = settings.DEFAULT_TRANSCRIBE_PROVIDER, settings.DEFAULT_TRANSCRIBE_MODEL
    if provider is None or model is None:
        return None
    return Transcriber(model, settings.transcribe_keys(), settings.DEFAULT_TRANSCRIBE_BASE_URL)


def hears_voice(route: TurnRoute) -> bool:
    """Some model the turn may try takes a voice message's audio inline."""
    return any(VOICE_MEDIA_TYPE in capabilities_of(target.provider, target.model).audio
               for leg in route.legs for target in leg.chain)
