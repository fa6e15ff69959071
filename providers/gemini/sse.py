"""SSE decoding for Gemini bodies, which may carry bare JSON lines (pure, no I/O).

Why not only `providers.streaming.SSEDecoder`: Gemini writes an error that happens
after the stream started as bare, often pretty-printed JSON lines with no `data:`
prefix (google-genai buffers such lines for the same reason). The shared decoder
ignores lines that are not SSE fields, which would turn that error into a silent
truncation. This decoder yields the same events as the shared one and, in addition,
returns a run of bare lines as one data block when its event ends.
"""

from __future__ import annotations

from providers.streaming import MAX_PENDING_BYTES, MalformedStreamError, SSEEvent

_SKIP = (b"id:", b"retry:", b"event:")


def _parse_block(block: bytes) -> SSEEvent | None:
    if block.startswith(b"data: ") and b"\n" not in block:
        return None, block[6:]
    data: list[bytes] = []
    bare: list[bytes] = []
    for line in block.split(b"\n"):
        if not line or line[0] == 0x3A:  # blank, or ":" comment
            continue
        if line.startswith(b"data:"):
            value = line[5:]
            data.append(value[1:] if value[:1] == b" " else value)
        elif not line.startswith(_SKIP):
            bare.append(line)
    if data:
        return None, b"\n".join(data)
    if bare:
        return None, b"\n".join(bare)
    return None


class GeminiSSEDecoder:
    """Feed byte pieces, get complete `(None, data)` events; split-invariant."""

    __slots__ = ("_buffer", "_pending_cr")

    def __init__(self) -> None:
        self._buffer = b""
        self._pending_cr = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        if self._pending_cr:
            chunk = b"\r" + chunk
            self._pending_cr = False
        if chunk.endswith(b"\r"):
            self._pending_cr = True  # may be the first half of a CRLF split across reads
            chunk = chunk[:-1]
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        buffer = self._buffer + chunk if self._buffer else chunk
        cut = buffer.rfind(b"\n\n")
        if cut < 0:
            if len(buffer) > MAX_PENDING_BYTES:
                raise MalformedStreamError(f"no event boundary in {len(buffer)} bytes")
            self._buffer = buffer
            return []
        self._buffer = buffer[cut + 2 :]
        return [e for b in buffer[:cut].split(b"\n\n") if (e := _parse_block(b)) is not None]
