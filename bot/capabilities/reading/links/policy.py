"""The operator's rules for reading links, handed in (the bot's settings are read elsewhere)."""

from __future__ import annotations

from dataclasses import dataclass

from providers.endpoint_check import EndpointPolicy, IPAddress, Resolver, resolve_host


@dataclass(frozen=True, slots=True)
class LinkPolicy:
    """What one question's links may cost and reach.

    `allow_private` is the operator's LINKS_ALLOW_PRIVATE, apart from ALLOW_PRIVATE_ENDPOINTS:
    a self-hoster may run a local model without letting members' links reach the LAN.
    Metadata and container credential addresses stay refused whatever it says (the
    address rules are the custom endpoints', `providers.endpoint_check`). `also_allowed`
    and `resolver` are for tests (a loopback server standing in for a public one, a fixed
    DNS table). The bounds hold per page: `timeout` is the whole fetch with its redirects,
    `max_bytes` the body read (past it the read stops), `max_chars` the text the model gets.
    """

    allow_private: bool = False
    max_links: int = 3
    max_bytes: int = 2 * 1024 * 1024
    timeout: float = 10.0
    max_redirects: int = 3
    max_chars: int = 20_000
    extract_timeout: float = 10.0
    also_allowed: frozenset[IPAddress] = frozenset()
    resolver: Resolver = resolve_host

    def endpoint_policy(self) -> EndpointPolicy:
        """The address rules every connection of a link fetch is checked against."""
        return EndpointPolicy(allow_private=self.allow_private, also_allowed=self.also_allowed,
                              resolver=self.resolver)
