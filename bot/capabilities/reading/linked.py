"""The links in a question, read for the model (`bot.capabilities.reading.links` fetches them safely).

A page becomes an untrusted quoted block with its URL and title; a linked PDF a document,
read like an attached one and framed as untrusted like a page; a link that could not be read is named in a small note for the
member, and the model is told it was not read (so it does not answer as if it had been).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import discord

from bot.capabilities.reading.attachment_files import UnreadableFile
from bot.capabilities.reading.documents import read_pdf_off_loop
from bot.capabilities.reading.links import (
    LinkDocument,
    LinkFailure,
    LinkPage,
    LinkPolicy,
    framed_document,
    framed_page,
    read_links,
)
from bot.edge.sink import DiscordMessageSink
from bot.question.history import NOTICE_PREFIX
from providers.i18n import t
from providers.types import ContentPart, TextPart
from stream.sink import SinkError

MAX_NOTE = 2000  # one Discord message of note lines


@dataclass
class LinkedContent:
    """What the question's links add: parts for the model, lines for the member."""

    parts: list[ContentPart] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


async def linked_content(text: str, policy: LinkPolicy, locale: str | None) -> LinkedContent:
    """Read the links in `text` (at most the policy's count, each once)."""
    reading = await read_links(text, policy)
    linked = LinkedContent()
    for result in reading.results:
        if isinstance(result, LinkPage):
            linked.parts.append(TextPart(framed_page(result)))
            if result.charset_replaced:
                declared, used = result.charset_replaced
                linked.notes.append(t("chat.link.charset_replaced", locale, url=f"<{result.url}>",
                                      declared=declared, used=used))
        elif isinstance(result, LinkDocument):
            await _document(linked, result, locale)
        elif isinstance(result, LinkFailure):
            _failed(linked, result.url, result.reason, locale)
    if reading.left_out:
        linked.notes.append(t("chat.link.left_out", locale, count=policy.max_links, more=len(reading.left_out)))
    return linked


async def _document(linked: LinkedContent, document: LinkDocument, locale: str | None) -> None:
    try:
        linked.parts += framed_document(document, await read_pdf_off_loop(document.data, document.filename))
    except UnreadableFile as refused:
        _failed(linked, document.url, f"pdf_{refused.reason}", locale)


def _failed(linked: LinkedContent, url: str, reason: str, locale: str | None) -> None:
    why = t(LINK_NOTE_KEYS.get(reason, "chat.link.unreadable"), locale)
    linked.notes.append(t("chat.link.not_read", locale, url=f"<{url}>", why=why))
    linked.parts.append(TextPart(f"(The member linked {url}, but it could not be read: {reason}.)"))


async def post_link_notes(message: discord.Message, notes: list[str]) -> None:
    """One reply of small lines naming the links that were not read, and why."""
    if not notes:
        return
    text = "\n".join(NOTICE_PREFIX + note for note in notes)[:MAX_NOTE]
    with contextlib.suppress(SinkError):
        await DiscordMessageSink(message.channel, reply_to=message).send(text, reply=True)


# Why a link was not read (`bot.capabilities.reading.links` reasons, and a linked PDF's) -> the member's words.
LINK_NOTE_KEYS = {
    "private_address": "chat.link.private_address", "blocked_address": "chat.link.blocked_address",
    "bad_url": "chat.link.bad_url", "unreachable": "chat.link.unreachable", "timeout": "chat.link.timeout",
    "too_large": "chat.link.too_large", "wrong_type": "chat.link.wrong_type", "http_status": "chat.link.http_status",
    "too_many_redirects": "chat.link.too_many_redirects", "no_text": "chat.link.no_text",
    "pdf_too_large": "chat.link.pdf_too_large", "pdf_too_many_pages": "chat.link.pdf_too_many_pages",
    "pdf_encrypted": "chat.link.pdf_encrypted", "pdf_unreadable": "chat.link.unreadable",
    "pdf_timeout": "chat.link.timeout", "pdf_busy": "chat.link.reader_busy",
}
