"""Which text encoding a fetched page is read in, when its server names one Python cannot use.

`Content-Type: text/html; charset=hex` is a lie a page can tell: `codecs.lookup("hex")`
finds a bytes-to-bytes codec, and decoding with it raises instead of giving text (so do
`base64`, `zip`, and the codecs that only decode strictly, such as `idna` or `undefined`).
A declared charset is used only when it decodes bytes to text; one that does not is
replaced by the page's own `<meta charset>` (HTML), else by what charset-normalizer
detects from the first bytes (a kept, widely used detector, already under trafilatura),
else UTF-8 — and the member's note says which was used instead of what.
"""

from __future__ import annotations

import asyncio
import codecs
import re
from dataclasses import dataclass

DETECT_BYTES = 64 * 1024  # enough for a detector's verdict; ~20 ms, in a worker thread
_META_BYTES = 2048  # where HTML puts its <meta charset> (browsers look in the first 1024)
_META = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]{1,40})""", re.IGNORECASE)
_PROBE = b"probe \xff"  # a byte no text codec leaves alone: a codec that cannot replace fails here
_UNSHOWN = re.compile(r"[^A-Za-z0-9._:+-]")
SHOWN_LIMIT = 40


@dataclass(frozen=True, slots=True)
class CharsetChoice:
    """What a body is decoded with: `codec` (None: nothing was declared, so the reader's
    default holds), and `not_understood`, the declared name shown safely, when it was replaced."""

    codec: str | None
    not_understood: str | None = None


def text_codec(name: str | None) -> str | None:
    """Python's name for the codec `name` when it decodes bytes to text, replacing what it
    cannot read; None for an unknown name or a codec that does not."""
    if not name or not name.strip():
        return None
    try:
        info = codecs.lookup(name.strip())
        _PROBE.decode(info.name, errors="replace")
    except (LookupError, UnicodeError, ValueError, TypeError):
        return None
    return info.name


def _shown(declared: str) -> str:
    """The server's name for its charset, safe in a Discord note: plain characters, bounded."""
    shown = _UNSHOWN.sub("", declared)[:SHOWN_LIMIT]
    return shown or "?"


def _meta_charset(body: bytes) -> str | None:
    found = _META.search(body[:_META_BYTES])
    return text_codec(found.group(1).decode("ascii")) if found else None


def _detected(body: bytes) -> str | None:
    import charset_normalizer  # only for a page whose charset is not understood

    best = charset_normalizer.from_bytes(body[:DETECT_BYTES]).best()
    codec = text_codec(best.encoding) if best is not None else None
    return "utf-8" if codec == "ascii" else codec  # ASCII so far: UTF-8 reads it and what may follow


def _replacement(body: bytes, html: bool) -> str:
    return (html and _meta_charset(body)) or _detected(body) or "utf-8"


async def choose_charset(body: bytes, declared: str | None, *, html: bool) -> CharsetChoice:
    """The codec for `body`, served with charset `declared`; the detection runs off the loop."""
    if not declared:
        return CharsetChoice(None)
    codec = text_codec(declared)
    if codec is not None:
        return CharsetChoice(codec)
    used = await asyncio.to_thread(_replacement, body, html)
    return CharsetChoice(used, _shown(declared))
