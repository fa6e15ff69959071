"""The http(s) links in a question's text, as a member means them (pure).

Discord's markup is not a link: mentions (`<@id>`, `<#id>`, `<@&id>`), custom emoji and
timestamps carry no URL, and the suppressed form `<https://…>` is the URL inside. Code
(inline or fenced) is quoted, not asked about, so links in it are left alone. Discord's
own files (attachment and media CDN URLs) are files the attachments code reads already,
and a message link opens Discord's web app, not the message: both are skipped.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)
_URL = re.compile(r"https?://[^\s<>\"'`|]+", re.IGNORECASE)
_TRAILING = ".,:;!?*_~'\""
_CLOSERS = {")": "(", "]": "["}
_DISCORD_FILE_HOSTS = frozenset({"cdn.discordapp.com", "media.discordapp.net", "images-ext-1.discordapp.net",
                                 "images-ext-2.discordapp.net"})
_DISCORD_APP_HOSTS = frozenset({"discord.com", "discordapp.com", "ptb.discord.com",
                                "canary.discord.com", "www.discord.com"})


def _trimmed(url: str) -> str:
    """`url` without the punctuation that ends the sentence or markup around it: a closing
    bracket stays only when the URL opened it (`…/wiki/Python_(language)`)."""
    while url:
        last = url[-1]
        if last in _TRAILING:
            url = url[:-1]
        elif last in _CLOSERS and url.count(last) > url.count(_CLOSERS[last]):
            url = url[:-1]
        else:
            return url
    return url


def _skipped(host: str, path: str) -> bool:
    if host in _DISCORD_FILE_HOSTS:
        return True
    return host in _DISCORD_APP_HOSTS and path.startswith("/channels/")


def find_links(text: str) -> list[str]:
    """Every distinct link in `text`, first appearance first (a fragment does not make a
    link distinct: it is never sent)."""
    found: list[str] = []
    seen: set[str] = set()
    for match in _URL.finditer(_CODE.sub(" ", text)):
        url = _trimmed(match.group())
        try:
            parts = urlsplit(url)
            host = (parts.hostname or "").rstrip(".").lower()
        except ValueError:
            continue  # a broken bracketed host: nothing to fetch
        if not host or _skipped(host, parts.path):
            continue
        key = urlunsplit(parts._replace(fragment=""))
        if key not in seen:
            seen.add(key)
            found.append(url)
    return found
