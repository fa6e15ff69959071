"""A server's generation settings: temperature, output-token cap and reasoning level."""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import GenerationParams
from bot.repo.common import RepositoryError, ensure_server, insert_for
from bot.repo.versions import config_write

REASONING_LEVELS = ("off", "low", "medium", "high")
MAX_TEMPERATURE = 2.0
MAX_OUTPUT_TOKENS = 200_000


@dataclass(frozen=True)
class Params:
    """None means "not set": the provider's default, or the operator's output-token cap."""

    temperature: float | None = None
    max_output_tokens: int | None = None
    reasoning: str | None = None


async def get_params(session: AsyncSession, guild_id: int) -> Params:
    row = await session.get(GenerationParams, guild_id)
    if row is None:
        return Params()
    return Params(row.temperature, row.max_output_tokens, row.reasoning)


def check_params(temperature: float | None, max_output_tokens: int | None, reasoning: str | None) -> None:
    """Refuse any value out of range before anything is written."""
    if temperature is not None and not (0 <= temperature <= MAX_TEMPERATURE and math.isfinite(temperature)):
        raise RepositoryError("bad_temperature")
    if max_output_tokens is not None and not 1 <= max_output_tokens <= MAX_OUTPUT_TOKENS:
        raise RepositoryError("bad_max_output_tokens")
    if reasoning is not None and reasoning not in REASONING_LEVELS:
        raise RepositoryError("bad_reasoning")


@config_write("server", "guild_id")
async def set_params(session: AsyncSession, guild_id: int, temperature: float | None = None,
                     max_output_tokens: int | None = None, reasoning: str | None = None) -> Params:
    """Change the given settings (None keeps what is stored) and return them all."""
    check_params(temperature, max_output_tokens, reasoning)
    old = await get_params(session, guild_id)
    new = Params(old.temperature if temperature is None else float(temperature),
                 old.max_output_tokens if max_output_tokens is None else max_output_tokens,
                 old.reasoning if reasoning is None else reasoning)
    await ensure_server(session, guild_id)
    stmt = insert_for(session, GenerationParams).values(guild_id=guild_id, **new.__dict__)
    await session.execute(stmt.on_conflict_do_update(index_elements=["guild_id"], set_=new.__dict__))
    return new
