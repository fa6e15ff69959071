"""Speech to text on an OpenAI-compatible `audio/transcriptions` endpoint, through the
official openai SDK (OpenAI itself, or a local Whisper server behind a base URL).

The SDK sends the documented multipart body (`file`, `model`, `response_format=json`) and
reads `{"text": ...}` back. As for the text routes, the HTTP client follows no redirect,
and a base URL's connections are held to the custom endpoints' address rules
(`providers.safe_transport`): the operator wrote the address, so private and loopback
ones are allowed, metadata and credential addresses never. Each request carries its own
key (none for a keyless local server); a key the endpoint refuses or rate-limits hands
the request to the next one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx2

from providers.endpoint_check import EndpointPolicy
from providers.http_transport import sdk_http_client
from providers.safe_transport import RequestRefused

if TYPE_CHECKING:
    import openai

OPENAI_BASE_URL = "https://api.openai.com/v1"
TIMEOUT_SECONDS = 60.0
CONNECT_TIMEOUT_SECONDS = 10.0
NEXT_KEY_STATUSES = frozenset({401, 403, 429})  # this key, not the request: the next key may do


class TranscriptionFailed(Exception):
    """The endpoint did not transcribe the recording; `reason` is a short word for the log
    (a status, "timeout", "unreachable", "refused"), never a key or the endpoint's body."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Recording:
    """The audio file to transcribe, as the multipart body names it."""

    filename: str
    data: bytes
    media_type: str


class Transcriber:
    """One transcription route: a model at an address, with its keys (empty: a keyless
    local server). One SDK client per route, made on first use (the SDK is imported then:
    start-up imports none), closed with `aclose`."""

    def __init__(self, model: str, keys: Sequence[str], base_url: str | None = None) -> None:
        self.model = model
        self.keys = tuple(keys) or ("",)
        self.base_url = base_url or OPENAI_BASE_URL
        self._policy = EndpointPolicy(allow_private=True) if base_url else None  # the operator's own address
        self._client: openai.AsyncOpenAI | None = None

    def _sdk(self) -> openai.AsyncOpenAI:
        import openai  # noqa: PLC0415 - lazy: the SDK costs start-up time (tests/test_idle_imports.py)

        if self._client is None:
            http_client = sdk_http_client(openai.DefaultAsyncHttpxClient, policy=self._policy)
            self._client = openai.AsyncOpenAI(
                api_key="unsent", base_url=self.base_url, max_retries=0, http_client=http_client,
                timeout=httpx2.Timeout(TIMEOUT_SECONDS, connect=CONNECT_TIMEOUT_SECONDS))
        return self._client

    async def transcribe(self, recording: Recording) -> str:
        """The recording's words (stripped; may be empty for silence); TranscriptionFailed
        when no key got them."""
        import openai  # noqa: PLC0415 - lazy, as above

        failure = TranscriptionFailed("no key")
        for key in self.keys:
            try:
                return await self._once(recording, key)
            except openai.APIStatusError as exc:
                failure = TranscriptionFailed(f"status {exc.status_code}")
                if exc.status_code not in NEXT_KEY_STATUSES:
                    raise failure from None
            except openai.APITimeoutError:
                raise TranscriptionFailed("timeout") from None
            except openai.APIConnectionError as exc:
                refused = isinstance(exc.__cause__, RequestRefused)
                raise TranscriptionFailed("refused" if refused else "unreachable") from None
            except RequestRefused:
                raise TranscriptionFailed("refused") from None
        raise failure

    async def _once(self, recording: Recording, key: str) -> str:
        import openai  # noqa: PLC0415 - lazy, as above

        auth = {"Authorization": f"Bearer {key}" if key else openai.Omit()}
        result = await self._sdk().audio.transcriptions.create(
            file=(recording.filename, recording.data, recording.media_type), model=self.model,
            response_format="json", extra_headers=auth)
        return result.text.strip()

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
