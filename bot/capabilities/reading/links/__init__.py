"""Reading the links in a question: each page fetched once from a public address, reduced to
its text (or a PDF's bytes), and framed for the model as untrusted data.

`read_links(text, policy)` is the one entry; `framed_page` makes a page's text for the
model, `framed_document` a linked PDF's parts; `LinkFailure.reason` is a short key the
question's note names.
"""

from bot.capabilities.reading.links.finding import find_links
from bot.capabilities.reading.links.framing import framed_document, framed_page
from bot.capabilities.reading.links.policy import LinkPolicy
from bot.capabilities.reading.links.reader import LinkReading, read_links
from bot.capabilities.reading.links.results import (
    REASONS,
    LinkDocument,
    LinkFailure,
    LinkPage,
    LinkResult,
)

__all__ = [
    "REASONS", "LinkDocument", "LinkFailure", "LinkPage", "LinkPolicy", "LinkReading",
    "LinkResult", "find_links", "framed_document", "framed_page", "read_links",
]
