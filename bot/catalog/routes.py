"""Which key asks a provider for its list of models, and at which address.

A manager's `/model set` and `/model fallback add` list with the server's own pool key for
the provider (its custom endpoint's address for the custom provider); with none, the
operator's environment key when the operator's default route is that provider (at the
operator's address). A member's `/personal model` lists with the member's own key. A
key that rests after errors or cannot be decrypted is not used; a route without a key
lists nothing (a keyless custom endpoint included): no list is asked for then.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from datetime import datetime

from bot.catalog.cache import ListKey
from bot.load.config_cache import ConfigCache
from bot.repo.keys import usable_leases
from bot.repo.personal import personal_lease
from bot.settings import Settings
from bot.vault import Vault
from providers.identity import Provider, provider_of

# A key's fingerprint is keyed per process: what is kept in memory holds no plain hash of
# a key, which a dump could test guesses of a short key against.
_PRINT_KEY = secrets.token_bytes(32)


def key_print(secret: str) -> str:
    """A one-way id of `secret`, stable within this process."""
    return hmac.new(_PRINT_KEY, secret.encode("utf-8"), hashlib.sha256).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class ListRoute:
    """A provider at an address (None: its own), the key that asks, and whether the
    operator wrote the address (it may then be private, as for the operator's answers)."""

    provider: Provider
    base_url: str | None
    secret: str = field(repr=False)
    operator_address: bool = False

    @property
    def key(self) -> ListKey:
        return ListKey(self.provider, self.base_url, key_print(self.secret))


def chosen_provider(value: object) -> Provider | None:
    """The provider a command's option holds; None before the member picked one."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return provider_of(value)
    except ValueError:
        return None


async def server_route(config: ConfigCache, vault: Vault, guild_id: int, provider: Provider,
                       now: datetime) -> ListRoute | None:
    """The server's pool key for `provider`, else the operator's environment key (see the
    module docstring); raises what the configuration read raises."""
    server = await config.server(guild_id)
    stored = server.facts.stored
    base_url = stored.base_url if provider is Provider.CUSTOM and stored is not None else None
    leases = usable_leases(vault, list(server.keys), provider.value, now)
    if leases and (base_url or provider is not Provider.CUSTOM):
        return ListRoute(provider, base_url, leases[0].secret)
    if leases:
        return None  # custom keys but no endpoint: nowhere to ask
    return await environment_route(config, provider, base_url, now)


async def environment_route(config: ConfigCache, provider: Provider, server_base_url: str | None,
                            now: datetime) -> ListRoute | None:
    """The operator's first resting-free DEFAULT_TEXT_API_KEYS key at the operator's
    address, when the operator's default route is `provider` (a custom one only where the
    server names no other endpoint)."""
    settings: Settings = config.settings
    named = settings.DEFAULT_TEXT_PROVIDER
    if named is None or provider_of(named) is not provider:
        return None
    base_url = settings.DEFAULT_TEXT_BASE_URL
    if provider is Provider.CUSTOM and (not base_url or server_base_url not in (None, base_url)):
        return None
    keys = settings.default_text_api_keys()
    health = await config.environment_health() if keys else []
    secret = next((key for key, rest in zip(keys, health, strict=True) if not rest.cooling(now)), None)
    return ListRoute(provider, base_url, secret, operator_address=True) if secret is not None else None


async def personal_route(config: ConfigCache, vault: Vault, user_id: int, guild_id: int | None,
                         provider: Provider, now: datetime) -> ListRoute | None:
    """The member's own key: the one for this server, else their global one."""
    for where in dict.fromkeys((guild_id, None)):
        lease = personal_lease(vault, await config.personal(user_id, where), now)
        if lease is not None:
            return ListRoute(provider, None, lease.secret)
    return None
