"""Where a route's requests go, in the form the operator may be shown: host, port and path.

No scheme, user name, password or query (a key may ride in any of them). A route without
a base URL goes to its provider's own public address.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from providers.identity import Provider, provider_of
from providers.openai_compat.request import DEFAULT_BASE_URLS

PUBLIC_BASE_URLS: dict[Provider, str] = {
    **DEFAULT_BASE_URLS,
    Provider.ANTHROPIC: "https://api.anthropic.com",
    Provider.GOOGLE: "https://generativelanguage.googleapis.com",
}


def host_and_path(url: str) -> str | None:
    """`https://user:pw@models.example:8443/v1/?key=x` -> `models.example:8443/v1`."""
    try:
        parts = urlsplit(url.strip())
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not host:
        return None
    host = f"[{host}]" if ":" in host else host  # an IPv6 address keeps its brackets
    return f"{host}{f':{port}' if port else ''}{parts.path.rstrip('/')}"


def route_address(provider: Provider | str, base_url: str | None) -> str | None:
    """The host and path a route's requests go to: its base URL, else its provider's own."""
    if base_url:
        return host_and_path(base_url)
    try:
        public = PUBLIC_BASE_URLS.get(provider_of(provider))
    except ValueError:
        return None
    return host_and_path(public) if public else None
