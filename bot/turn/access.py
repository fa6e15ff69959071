"""How this bot reaches its providers: one object made at start-up, handed to every attempt.

What travels together to every adapter lives here: the custom endpoints' address policy
(checked again at every connection), the operator's word about what custom endpoints
take (CUSTOM_API, CUSTOM_REASONING_EFFORT), the pool of provider HTTP clients every
attempt shares, with what each route's provider refused (`providers.healing`), and the
providers' model lists read so far (`bot.catalog`: OpenRouter's says what each model takes).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import partial

from bot.catalog.cache import ModelCatalog
from bot.catalog.routes import ListRoute
from bot.repo import ModelTarget
from bot.settings import Settings
from providers.capabilities import capabilities_of
from providers.client_pool import ClientPool
from providers.endpoint_check import EndpointPolicy
from providers.healing import Refusal
from providers.identity import Provider
from providers.listing import list_models
from providers.model_capabilities import NO_HINTS, ModelCapabilities, RouteHints


@dataclass(frozen=True, slots=True)
class ProviderAccess:
    """The address policy, the operator's custom-endpoint hints, the shared clients
    (None: each attempt builds and closes its own, as a test may) and the model lists read."""

    policy: EndpointPolicy = field(default_factory=EndpointPolicy)
    custom: RouteHints = NO_HINTS
    clients: ClientPool | None = None
    catalog: ModelCatalog = field(default_factory=ModelCatalog)

    @classmethod
    def of(cls, settings: Settings, clients: ClientPool | None = None) -> ProviderAccess:
        """As the operator set it; `clients` is the process's pool (None: none shared)."""
        return cls(EndpointPolicy(allow_private=settings.ALLOW_PRIVATE_ENDPOINTS),
                   RouteHints(custom_api=settings.CUSTOM_API, custom_reasoning_effort=settings.CUSTOM_REASONING_EFFORT),
                   clients)

    def hints(self, target: ModelTarget) -> RouteHints:
        """What the bot knows of `target` beyond its names: the operator's word for a custom
        endpoint; for OpenRouter, what its model list said the model takes, when a list was
        read (from what is kept: an answer never waits for a list)."""
        if target.provider is Provider.CUSTOM:
            return self.custom
        if target.provider is Provider.OPENROUTER:
            listed = self.catalog.listed_parameters(target.provider, target.base_url, target.model)
            if listed is not None:
                return RouteHints(listed_parameters=listed)
        return NO_HINTS

    def policy_for(self, target: ModelTarget) -> EndpointPolicy:
        """The address policy for `target` (`policy_at` its `operator_address`)."""
        return self.policy_at(target.operator_address)

    def policy_at(self, operator_address: bool) -> EndpointPolicy:
        """The address policy: private addresses allowed on the operator's own default
        address (the operator wrote it); a server's own endpoint keeps the policy.
        Metadata and credential addresses stay refused whatever it allows."""
        if not operator_address:
            return self.policy
        return dataclasses.replace(self.policy, allow_private=True)

    def capabilities(self, target: ModelTarget) -> ModelCapabilities:
        """What `target`'s model takes, as its attempts will be told (`providers.capabilities`)."""
        return capabilities_of(target.provider, target.model, self.hints(target))

    def learn(self, target: ModelTarget, secret: str) -> None:
        """An OpenRouter attempt whose provider's list this process has not read (or read
        long ago): one read starts in the background with this attempt's key, so later
        attempts know what each model takes (this one never waits for it: it assumes
        everything, as before). Other providers' lists say nothing a turn needs."""
        if target.provider is not Provider.OPENROUTER or not secret:
            return
        route = ListRoute(target.provider, target.base_url, secret, target.operator_address)
        self.catalog.models(route.key, partial(list_models, route.provider, api_key=secret, base_url=route.base_url,
                                               endpoint_policy=self.policy_for(target), clients=self.clients))

    def refusals(self, target: ModelTarget) -> list[Refusal]:
        """What `target`'s provider refused so far in this process (healed, remembered)."""
        if self.clients is None:
            return []
        return self.clients.refusals.refusals((target.provider.value, target.base_url, target.model))
