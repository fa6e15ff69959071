"""The voice tests' fakes: a voice message as Discord sends it, Gemini's documented audio
types enforced on the replay server, and an OpenAI-compatible transcription server.

- A voice message: message flag IS_VOICE_MESSAGE (1 << 13) and one `audio/ogg` attachment
  with `duration_secs` and a base64 `waveform` (Discord's "Uploading a voice message").
  The recording is an Ogg page's header (capture pattern `OggS`, RFC 3533) opening an
  OpusHead packet; its CRC is not computed: nothing in the bot decodes the audio.
- Gemini (`GeminiAudioRules`): the audio guide lists the inline audio types WAV, MP3,
  AIFF, AAC, OGG and FLAC; inline data of any other `audio/*` type, or data that is not
  base64, is refused with a 400 in Google's error shape (the message is this fake's own:
  no public recording of the API's words was found).
- Transcription (`FakeTranscriber`): `POST {base}/audio/transcriptions`, a multipart body
  with `file` and `model` (OpenAI's API reference), `response_format=json` answered with
  `{"text": …}`. Refused as OpenAI documents: no `file` or `model` (400), a file whose
  extension is not one of flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav, webm (400, "Invalid
  file format"), and, when the fake has keys, a request without one of them (401,
  `invalid_api_key`).
"""

from __future__ import annotations

import base64
import binascii
import struct
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from aiohttp import web

from tests.support.env_loopback import serve_on_loopback
from tests.support.fake_discord_server import UserFile
from tests.support.fake_provider_server import Reply

VOICE_FLAG = 1 << 13
GEMINI_AUDIO = frozenset({"audio/wav", "audio/mp3", "audio/aiff", "audio/aac", "audio/ogg", "audio/flac"})
TRANSCRIBABLE = frozenset({".flac", ".mp3", ".mp4", ".mpeg", ".mpga", ".m4a", ".ogg", ".wav", ".webm"})


def ogg_recording(extra: int = 64) -> bytes:
    """An Ogg page opening an Opus stream (header fields per RFC 3533, CRC left zero)."""
    head = b"OpusHead" + bytes([1, 1]) + struct.pack("<HIhB", 312, 48000, 0, 0)
    header = b"OggS" + bytes([0, 2]) + struct.pack("<qIII", 0, 1, 0, 0) + bytes([1, len(head)])
    return header + head + bytes(extra)


def voice_file(data: bytes | None = None, seconds: float = 3.5, size: int | None = None) -> UserFile:
    """A voice message's attachment as Discord sends it."""
    return UserFile("voice-message.ogg", ogg_recording() if data is None else data, content_type="audio/ogg",
                    size=size, duration_secs=seconds, waveform=base64.b64encode(bytes(range(0, 256, 4))).decode())


def _google_error(message: str) -> Reply:
    return Reply.error(400, {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})


class GeminiAudioRules:
    """Gemini's inline audio as its audio guide documents it (see the module docstring)."""

    def refusal(self, path: str, body: Any) -> Reply | None:
        if "enerateContent" not in path or not isinstance(body, dict):
            return None
        for content in body.get("contents") or ():
            for part in content.get("parts") or ():
                inline = part.get("inlineData") if isinstance(part, dict) else None
                if not inline or not str(inline.get("mimeType", "")).startswith("audio/"):
                    continue
                if inline["mimeType"] not in GEMINI_AUDIO:
                    return _google_error(f"Unsupported MIME type: {inline['mimeType']}")
                try:
                    base64.b64decode(inline.get("data", ""), validate=True)
                except binascii.Error:
                    return _google_error("Invalid value at 'contents.parts.inline_data.data' (TYPE_BYTES)")
        return None

    def shaped(self, path: str, body: Any, reply: Reply) -> Reply:
        return reply


@dataclass
class Transcribed:
    """One request the fake transcription server took, as it arrived."""

    model: str
    filename: str
    content_type: str
    data: bytes
    response_format: str | None
    authorization: str | None


def _openai_error(status: int, message: str, code: str | None = None) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "invalid_request_error", "param": None,
                                        "code": code}}, status=status)


@dataclass
class FakeTranscriber:
    """An OpenAI-compatible transcription server on loopback (see the module docstring)."""

    words: str = "what is the tallest mountain in japan"
    keys: frozenset[str] = frozenset()
    failing: bool = False
    taken: list[Transcribed] = field(default_factory=list)
    url: str = ""

    async def _transcriptions(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload, model = form.get("file"), form.get("model")
        authorization = request.headers.get("Authorization")
        if self.keys and (authorization or "").removeprefix("Bearer ") not in self.keys:
            return _openai_error(401, "Incorrect API key provided.", "invalid_api_key")
        if not isinstance(upload, web.FileField) or not isinstance(model, str) or not model:
            return _openai_error(400, "you must provide a model parameter" if upload else "file is required")
        if PurePosixPath(upload.filename.lower()).suffix not in TRANSCRIBABLE:
            return _openai_error(400, "Invalid file format. Supported formats: "
                                      "['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm']")
        data = upload.file.read()
        format_ = form.get("response_format")
        self.taken.append(Transcribed(model, upload.filename, upload.content_type, data,
                                      format_ if isinstance(format_, str) else None, authorization))
        if self.failing:
            return _openai_error(500, "The server had an error while processing your request.")
        return web.json_response({"text": self.words})

    async def __aenter__(self) -> FakeTranscriber:
        app = web.Application(client_max_size=32 * 1024 * 1024)
        app.router.add_post("/v1/audio/transcriptions", self._transcriptions)
        self._runner, port = await serve_on_loopback(app)
        self.url = f"http://127.0.0.1:{port}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._runner.cleanup()
