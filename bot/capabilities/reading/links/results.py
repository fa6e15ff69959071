"""What reading one link gives: its text, a document's bytes, or why it was not read."""

from __future__ import annotations

from dataclasses import dataclass

# The reasons a link is not read; the question's note words each one (localized by the bot).
PRIVATE_ADDRESS = "private_address"        # a loopback, private or otherwise non-public address
BLOCKED_ADDRESS = "blocked_address"        # a cloud metadata or credential address: never
BAD_URL = "bad_url"                        # not a usable http(s) URL (e.g. a user name in it)
UNREACHABLE = "unreachable"                # no such host, refused or broken connection, TLS error
TIMEOUT = "timeout"                        # not read within the time bound
TOO_LARGE = "too_large"                    # the body is larger than the size bound
WRONG_TYPE = "wrong_type"                  # not HTML, plain text or a PDF
HTTP_STATUS = "http_status"                # answered with an error status (or a bad redirect)
TOO_MANY_REDIRECTS = "too_many_redirects"  # more redirects than the bound
NO_TEXT = "no_text"                        # an HTML page with no readable main text
REASONS = (PRIVATE_ADDRESS, BLOCKED_ADDRESS, BAD_URL, UNREACHABLE, TIMEOUT, TOO_LARGE,
           WRONG_TYPE, HTTP_STATUS, TOO_MANY_REDIRECTS, NO_TEXT)


@dataclass(frozen=True, slots=True)
class LinkPage:
    """A page's readable text: HTML reduced to its main text, or plain text as it is.

    `url` is the link as the member wrote it, `final_url` where the redirects ended;
    `text` is already cut to the policy's characters (`cut` says so). `charset_replaced`
    is (the charset the server named, the one read instead) when the named one does not
    decode to text (the member's note says so)."""

    url: str
    final_url: str
    title: str | None
    text: str
    cut: bool = False
    charset_replaced: tuple[str, str] | None = None


@dataclass(frozen=True, slots=True)
class LinkDocument:
    """A linked PDF as fetched; the documents code makes it a `DocumentPart`."""

    url: str
    final_url: str
    media_type: str
    data: bytes
    filename: str


@dataclass(frozen=True, slots=True)
class LinkFailure:
    """A link not read: `reason` is one of REASONS; `detail` is short English for logs and
    tests (an HTTP status, the refused address), never page content."""

    url: str
    reason: str
    detail: str = ""


LinkResult = LinkPage | LinkDocument | LinkFailure
