"""The custom-endpoint address check (providers.endpoint_check) with localized refusals."""

from __future__ import annotations

from urllib.parse import urlsplit

from providers.endpoint_check import EndpointRejected, check_custom_endpoint

MAX_URL_LENGTH = 2048

# EndpointRejected.reason -> catalog key; unknown reasons read as a plain refusal.
REFUSAL_KEYS: dict[str, str] = {
    "malformed": "commands.error.endpoint_malformed",
    "scheme": "commands.error.endpoint_malformed",
    "credentials": "commands.error.endpoint_credentials",
    "unresolvable": "commands.error.endpoint_unresolvable",
    "private": "commands.error.endpoint_private",
    "metadata": "commands.error.endpoint_blocked",
}


async def validated_endpoint(base_url: str, allow_private: bool) -> tuple[str, str | None]:
    """(normalized URL, None) when usable, else (the input, the refusal's catalog key)."""
    try:
        parts = urlsplit(base_url.strip())
    except ValueError:
        return base_url, "commands.error.endpoint_malformed"
    # A base URL has no query or fragment; one there is a typo or a key pasted into it.
    if len(base_url) > MAX_URL_LENGTH or parts.query or parts.fragment:
        return base_url, "commands.error.endpoint_malformed"
    try:
        checked = await check_custom_endpoint(base_url, allow_private=allow_private)
    except EndpointRejected as rejected:
        return base_url, REFUSAL_KEYS.get(rejected.reason, "commands.error.endpoint_blocked")
    return checked.base_url.rstrip("/"), None


def shown_url(base_url: str) -> str:
    """The URL as echoed back: no user info, query or fragment (they may hold a secret)."""
    try:
        parts = urlsplit(base_url.strip())
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "\u2026"
    if not parts.scheme or not host:
        return base_url.strip()[:60].split("@")[-1]
    return f"{parts.scheme}://{host}{port}{parts.path}"[:200]
