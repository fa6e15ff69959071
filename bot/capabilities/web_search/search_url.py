"""SEARCH_URL's check at start-up: what the settings can tell of the search service's
address without DNS (`bot.settings` calls it from its validator)."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from providers.endpoint_check import (
    METADATA_HOSTS,
    EndpointRejected,
    address_refusal,
    connection_host,
)


def search_url_problem(url: str, *, allow_private: bool) -> str | None:
    """What is wrong with SEARCH_URL as far as can be told without DNS, or None.

    A literal address is checked here with the custom endpoints' rules, so a refused one
    stops start-up instead of failing every search; a host name is checked (and pinned)
    at each connection by the search client (`bot/capabilities/web_search/service/http.py`).
    """
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        return "not a URL (expected e.g. http://searxng:8080)"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "must start with http:// or https:// and name a host"
    if parts.username is not None or parts.password is not None:
        return "must not contain a user name or password"
    try:
        host = connection_host(url).rstrip(".")  # as the client will connect: １２７。0。0。1 is 127.0.0.1
    except EndpointRejected:
        return "has a host name that is not valid"
    if host.lower() in METADATA_HOSTS:
        return f"{host} is a cloud metadata service"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    refusal = address_refusal(address, allow_private=allow_private)
    if refusal is None:
        return None
    if refusal.reason == "private":
        return (f"{refusal.text}; set SEARCH_ALLOW_PRIVATE=true (or ALLOW_PRIVATE_ENDPOINTS=true) "
                "to let the search service live there")
    return refusal.text
