"""What a voice message's recording must be before anything hears it (pure, no I/O).

Discord states a voice message's length (`duration_secs`) and size before any byte is
fetched, so both bounds are checked from its metadata first; the bytes must then be an Ogg
stream (every Ogg page opens with the capture pattern `OggS`, RFC 3533 §6), whatever the
stated content type says.
"""

from __future__ import annotations

import math
from typing import Literal

VOICE_MEDIA_TYPE = "audio/ogg"  # Discord's voice messages: Ogg Opus
MAX_VOICE_BYTES = 8 * 1024 * 1024  # a 20-minute Opus voice message is about 5 MB
OGG_CAPTURE = b"OggS"

BoundRefusal = Literal["voice_too_long", "voice_too_large"]


def bound_refusal(seconds: float | None, size: int, max_seconds: int) -> BoundRefusal | None:
    """Past the length or the size bound (from Discord's metadata), or None."""
    if seconds is None or not math.isfinite(seconds) or seconds > max_seconds:
        return "voice_too_long"
    if size > MAX_VOICE_BYTES:
        return "voice_too_large"
    return None


def is_ogg(data: bytes) -> bool:
    """The bytes open an Ogg stream (a first page of at least a header's 27 bytes)."""
    return len(data) >= 27 and data.startswith(OGG_CAPTURE)
