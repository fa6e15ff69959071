"""The server's generation settings put on an answer's request.

Each provider family's request builder turns them into its own form (OpenAI-format
`reasoning_effort`, Anthropic's `thinking` budget, Gemini's `thinkingConfig`); here they
only land on the `ChatRequest`. A setting the server did not choose leaves the request
as it was (the operator's MAX_OUTPUT_TOKENS, the provider's own temperature).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable

from sqlalchemy.exc import SQLAlchemyError

from bot.config_cache import cache_of
from bot.repo.params import Params, get_params
from providers.types import ChatRequest

log = logging.getLogger(__name__)


def apply_params(request: ChatRequest, params: Params) -> ChatRequest:
    """`request` with the server's settings; reasoning "off" asks for none."""
    changes: dict = {}
    if params.temperature is not None:
        changes["temperature"] = params.temperature
    if params.max_output_tokens is not None:
        changes["max_output_tokens"] = params.max_output_tokens
    if params.reasoning == "off":
        changes.update(reasoning_effort=None, thinking_budget=None)
    elif params.reasoning is not None:
        changes["reasoning_effort"] = params.reasoning
    return dataclasses.replace(request, **changes) if changes else request


async def with_server_params(sessions: Callable | None, guild_id: int | None, request: ChatRequest) -> ChatRequest:
    """The request with the server's stored settings (from the configuration cache of
    `sessions` when they have one); unchanged in a DM, without a database, or when the
    settings cannot be read (the answer matters more)."""
    if sessions is None or guild_id is None:
        return request
    config = cache_of(sessions)
    try:
        if config is not None:
            params = (await config.server(guild_id)).params
        else:
            async with sessions() as session:
                params = await get_params(session, guild_id)
    except (SQLAlchemyError, OSError) as exc:
        # The turn reads the same configuration next and logs and counts the failure once.
        log.debug("generation settings of server %s cannot be read (%s): defaults apply", guild_id, exc)
        return request
    return apply_params(request, params)
