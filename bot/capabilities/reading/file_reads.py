"""What a batch's files were read to, kept while the batch lives.

A member's back-to-back messages join one question (`bot.capabilities.listening.batching`), and each
time one joins, the whole batch is prepared again: without this, every earlier message's
files were downloaded and read again (five messages with a file each: fifteen downloads,
fifteen reads). The batch's `Question` carries one `FileReads`; each attachment is read
once through it, its value (or the reason it is unreadable) kept by attachment id.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from bot.capabilities.reading.attachment_files import UnreadableFile

T = TypeVar("T")
RETRIED = frozenset({"busy"})  # a moment later the readers may be free: not kept


class FileReads:
    """Attachment id -> what reading it gave (a part, a document's text, or UnreadableFile)."""

    def __init__(self) -> None:
        self._read: dict[int, Any] = {}

    async def once(self, attachment_id: int, read: Callable[[], Awaitable[T]]) -> T:
        """`read()`'s value, from the first time this attachment was read when it was."""
        if attachment_id in self._read:
            kept = self._read[attachment_id]
            if isinstance(kept, UnreadableFile):
                raise UnreadableFile(kept.reason, megapixels=kept.megapixels)
            return kept  # type: ignore[no-any-return]
        try:
            value = await read()
        except UnreadableFile as unreadable:
            if unreadable.reason not in RETRIED:
                self._read[attachment_id] = unreadable
            raise
        self._read[attachment_id] = value
        return value

    def __len__(self) -> int:
        return len(self._read)
