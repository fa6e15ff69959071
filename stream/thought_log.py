"""A turn's reasoning as a thought-log post: one embed, plus a `.txt` when it is long (pure).

The reasoning is the thought entries of the stream (summaries and raw thoughts as text;
signatures and redacted reasoning only as a note that they were present, never decoded)
followed by the think and `<details>` blocks captured from the visible text. The footer
names who produced it: `Provider: <provider>`, or `Provider: openrouter via <backend>`
when OpenRouter reported the serving backend. When the text does not fit an embed
(description 4,096 characters, whole embed 6,000), the embed shows the beginning and the
full text travels as an attachment.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from providers.identity import Provider
from providers.types import ThoughtLogEntry
from stream.capture import CapturedBlock
from stream.sink import EmbedSpec

EMBED_DESCRIPTION_LIMIT = 4096
EMBED_TOTAL_LIMIT = 6000
THOUGHT_LOG_COLOR = 0x5865F2
ELLIPSIS = "…"


@dataclass(slots=True, frozen=True)
class ThoughtLogLabels:
    """The localizable words of a thought-log post (English defaults)."""

    title: str = "Thought log"
    attached: str = "The full reasoning is attached as a text file."
    signature: str = "[thought signature present]"
    redacted: str = "[redacted reasoning present, not shown]"
    details: str = "Hidden details block:"
    cut: str = "[the beginning of the reasoning was cut to keep it bounded]"
    provider: str = "Provider: {provider}"
    provider_via: str = "Provider: {provider} via {backend}"
    searched: str = "Searched the web for:"

    @classmethod
    def translated(cls, translate: Callable[[str], str]) -> ThoughtLogLabels:
        """Labels from the `chat.thought_log.*` catalog keys through `translate`."""
        return cls(
            title=translate("chat.thought_log.title"),
            attached=translate("chat.thought_log.attached"),
            signature=translate("chat.thought_log.signature"),
            redacted=translate("chat.thought_log.redacted"),
            details=translate("chat.thought_log.details"),
            cut=translate("chat.thought_log.cut"),
            provider=translate("chat.thought_log.provider"),
            provider_via=translate("chat.thought_log.provider_via"),
            searched=translate("chat.thought_log.searched"),
        )


@dataclass(slots=True, frozen=True)
class ThoughtLogPost:
    """What to post in the thought-log channel: an embed and maybe a text attachment."""

    embed: EmbedSpec
    attachment: tuple[str, bytes] | None = None  # (filename, UTF-8 text)


def thought_log_footer(provider: str, serving_provider: str | None = None,
                       labels: ThoughtLogLabels = ThoughtLogLabels()) -> str:
    """`Provider: openrouter via <backend>` when a backend is known, else `Provider: <p>`
    (in the labels' language; the names are filled in as given, never formatted)."""
    backend = (serving_provider or "").strip()
    if provider == Provider.OPENROUTER and backend:
        return labels.provider_via.replace("{provider}", provider).replace("{backend}", backend)
    return labels.provider.replace("{provider}", provider)


def reasoning_text(
    entries: Iterable[ThoughtLogEntry],
    blocks: Iterable[CapturedBlock] = (),
    labels: ThoughtLogLabels = ThoughtLogLabels(),
    searches: Sequence[str] = (),
) -> str:
    """All reasoning of a turn as plain text, sections separated by blank lines; the web
    searches it made (`searches`, the queries) open it."""
    sections: list[str] = []
    if searches:
        sections.append(labels.searched + "\n" + "\n".join(f"- {query.strip()}" for query in searches))
    for entry in entries:
        if entry.kind in ("raw", "summary"):
            text = entry.text.strip()
        else:
            text = labels.signature if entry.kind == "signature" else labels.redacted
            if sections and sections[-1] == text:
                continue  # one note per run, however many signature chunks came
        if text:
            sections.append(text)
    for block in blocks:
        text = block.text.strip()
        if not text:
            continue
        sections.append(f"{labels.details}\n{text}" if block.kind == "details" else text)
    return "\n\n".join(sections)


def format_thought_log(
    entries: Iterable[ThoughtLogEntry],
    blocks: Iterable[CapturedBlock] = (),
    *,
    provider: str,
    serving_provider: str | None = None,
    labels: ThoughtLogLabels = ThoughtLogLabels(),
    filename: str = "reasoning.txt",
    cut: bool = False,
    searches: Sequence[str] = (),
) -> ThoughtLogPost | None:
    """The post for a turn's reasoning and web searches, or None when there was neither;
    `cut` says the beginning was dropped to keep the reasoning bounded (a note opens the text)."""
    text = reasoning_text(entries, blocks, labels, searches)
    if not text:
        return None
    if cut:
        text = f"{labels.cut}\n\n{text}"
    footer = thought_log_footer(provider, serving_provider, labels)
    title = labels.title
    room = min(EMBED_DESCRIPTION_LIMIT, EMBED_TOTAL_LIMIT - len(title) - len(footer))
    if len(text) <= room:
        return ThoughtLogPost(EmbedSpec(title, text, THOUGHT_LOG_COLOR, footer=footer))
    suffix = f"{ELLIPSIS}\n\n{labels.attached}"
    preview = text[: max(0, room - len(suffix))].rstrip() + suffix
    embed = EmbedSpec(title, preview, THOUGHT_LOG_COLOR, footer=footer)
    return ThoughtLogPost(embed, (filename, text.encode("utf-8")))
