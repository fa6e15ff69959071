"""Listing one provider's models through the adapter family that speaks to it.

The family's adapter is imported on first use, as `create_adapter` imports it (an idle
bot loads no SDK), but in a worker thread: importing an SDK takes a second or more, and
a list is asked for while a member types, when the bot has 3 s to answer the keystroke.
It is built as for an answer but naming no model: its SDK client is the one an answer
would use, with the same address checks for a custom endpoint, no redirects and the key
on each request. What is read is `providers/model_list.py`'s.
"""

from __future__ import annotations

import asyncio
import importlib
from typing import Any

from providers.identity import Provider, provider_of
from providers.model_list import LIST_SECONDS, ListedModel

# The adapter class that lists each provider's models: Gemini's and Anthropic's own, the
# OpenAI SDK's for every OpenAI-style endpoint (OpenAI itself, whichever API it answers on).
_LISTERS: dict[Provider, tuple[str, str]] = {
    Provider.GOOGLE: ("providers.gemini.adapter", "GeminiAdapter"),
    Provider.ANTHROPIC: ("providers.anthropic_native.adapter", "AnthropicAdapter"),
}
_OPENAI_STYLE = ("providers.openai_compat.sdk", "OpenAISdkAdapter")
NO_MODEL = ""  # a listing asks about no model


async def list_models(provider: Provider | str, *, api_key: str, base_url: str | None = None,
                      **options: Any) -> tuple[ListedModel, ...]:
    """The models `provider` lists at `base_url` (None: its own address) for `api_key`.

    `options` are the adapter options an answer would get (`endpoint_policy`, `clients`);
    others are ignored. Raises ModelListFailed when the list cannot be had, ValueError
    when the route cannot be built at all (a custom provider without an address).
    """
    identity = provider_of(provider)
    module, name = _LISTERS.get(identity, _OPENAI_STYLE)
    family = getattr(await asyncio.to_thread(importlib.import_module, module), name)
    adapter = family.create(identity, api_key=api_key, model=NO_MODEL, base_url=base_url,
                            **{**options, "timeout": LIST_SECONDS})
    try:
        return await adapter.list_models()
    finally:
        await adapter.aclose()
