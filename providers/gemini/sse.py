"""SSE decoding for Gemini bodies, which may carry bare JSON lines (pure, no I/O).

Why not only `providers.streaming.SSEDecoder`: Gemini writes an error that happens
after the stream started as bare, often pretty-printed JSON lines with no `data:`
prefix (google-genai buffers such lines for the same reason). The shared decoder
ignores lines that are not SSE fields, which would turn that error into a silent
truncation. This decoder yields the same events as the shared one and, in addition,
returns a run of bare lines as one data block when its event ends. Only the block
parser differs; line splitting and buffering are the shared decoder's.
"""

from __future__ import annotations

from providers.streaming import SSEDecoder, SSEEvent

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


class GeminiSSEDecoder(SSEDecoder):
    """The shared decoder, with blocks of bare JSON lines kept as data; split-invariant."""

    __slots__ = ()
    parse_block = staticmethod(_parse_block)
