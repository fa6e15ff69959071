"""The text of `/usage`, `/personal usage`, `/limits show` and the `/status` lines, from
totals already read (the caller passes its localized `say(key, **params)`); only
`settings_lines` reads the database."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from bot.repo.params import Params, get_params
from bot.repo.usage import Limits, Price, UsageTotal, get_limits
from bot.usage.params import unsent_settings
from providers.healing import Refusal
from providers.model_capabilities import ModelCapabilities

Say = Callable[..., str]
Prices = dict[str, Price]
ESTIMATE_MARK = "~"
REPORT_DAYS = 30  # the period of `/usage` and `/personal usage`


def search_cost_of(totals: Sequence[UsageTotal], prices: Prices) -> float | None:
    """What the searches of per-model totals cost; None when no searching model has a
    search price."""
    priced = [(t, prices[t.label[1]].per_1000_searches) for t in totals
              if t.searches and t.label[1] in prices and prices[t.label[1]].per_1000_searches is not None]
    if not priced:
        return None
    return sum(t.searches * (per_1000 or 0.0) / 1000 for t, per_1000 in priced)


def cost_of(totals: Sequence[UsageTotal], prices: Prices) -> float | None:
    """What per-model totals cost at the server's prices, searches included; None when
    no model has a price."""
    priced = [(t, prices[t.label[1]]) for t in totals if t.label[1] in prices]
    if not priced:
        return None
    tokens = sum(t.input_tokens * p.input_per_million / 1e6 + t.output_tokens * p.output_per_million / 1e6
                 for t, p in priced)
    return tokens + (search_cost_of(totals, prices) or 0.0)


def summed(totals: Sequence[UsageTotal]) -> UsageTotal | None:
    if not totals:
        return None
    fields = [sum(getattr(t, name) for t in totals) for name in
              ("input_tokens", "output_tokens", "reasoning_tokens", "cached_input_tokens", "messages")]
    return UsageTotal(None, *fields, any(t.estimated for t in totals), sum(t.searches for t in totals))


def tokens_text(say: Say, total: UsageTotal, cost: float | None = None, search_cost: float | None = None) -> str:
    """The counts of one total; its searches (and what they cost) only when it has any."""
    body = say("commands.reply.usage_tokens", input=f"{total.input_tokens:,}", cached=f"{total.cached_input_tokens:,}",
               output=f"{total.output_tokens:,}", reasoning=f"{total.reasoning_tokens:,}",
               messages=f"{total.messages:,}")
    if total.searches:
        body += " · " + say("commands.reply.usage_searches", count=f"{total.searches:,}")
        if search_cost is not None:
            body += " " + say("commands.reply.usage_searches_cost", cost=f"{search_cost:,.4f}")
    if cost is not None:
        body += " · " + say("commands.reply.usage_cost", cost=f"{cost:,.4f}")
    return f"{ESTIMATE_MARK} {body}" if total.estimated else body


def _period(say: Say, key: str, per_model: Sequence[UsageTotal], prices: Prices) -> str:
    total = summed(per_model)
    if total is None:
        return say(key, tokens="0")
    return say(key, tokens=tokens_text(say, total, cost_of(per_model, prices), search_cost_of(per_model, prices)))


def usage_lines(say: Say, header_key: str, today: Sequence[UsageTotal], month: Sequence[UsageTotal],
                members: Sequence[UsageTotal] = (), prices: Prices | None = None) -> list[str]:
    """Today and the last 30 days, per model, then the top members (when given)."""
    prices = prices or {}
    lines = [say(header_key)]
    if not month:
        return [*lines, say("commands.reply.usage_empty")]
    lines += [_period(say, "commands.reply.usage_today", today, prices),
              _period(say, "commands.reply.usage_month", month, prices),
              say("commands.reply.usage_models_header")]
    lines += [say("commands.reply.usage_model_line", provider=t.label[0], model=t.label[1],
                  tokens=tokens_text(say, t, cost_of([t], prices), search_cost_of([t], prices))) for t in month]
    if members:
        lines.append(say("commands.reply.usage_members_header"))
        lines += [say("commands.reply.usage_member_line", position=i, user=t.label, tokens=tokens_text(say, t))
                  for i, t in enumerate(members, start=1)]
    if any(t.estimated for t in month):
        lines.append(say("commands.reply.usage_estimated"))
    return lines


def limit_lines(say: Say, limits: Limits) -> list[str]:
    def shown(value: int | None) -> str:
        return f"{value:,}" if value else say("commands.reply.limit_none")

    lines = [say("commands.reply.limits_header"),
             say("commands.reply.limit_messages_per_hour", value=shown(limits.messages_per_hour)),
             say("commands.reply.limit_tokens_per_day", value=shown(limits.tokens_per_day)),
             say("commands.reply.limit_server_tokens_per_day", value=shown(limits.server_tokens_per_day))]
    if limits.searches_per_day:  # only where web search is limited: most servers never search
        lines.append(say("commands.reply.limit_searches_per_day", value=shown(limits.searches_per_day)))
    if limits.images_per_day:  # only where images are limited beyond the operator's bound
        lines.append(say("commands.reply.limit_images_per_day", value=shown(limits.images_per_day)))
    return lines


def params_lines(say: Say, params: Params) -> list[str]:
    default = say("commands.reply.params_default")
    temperature = default if params.temperature is None else f"{params.temperature:g}"
    cap = default if params.max_output_tokens is None else f"{params.max_output_tokens:,}"
    return [say("commands.reply.params_header"),
            say("commands.reply.params_line", temperature=temperature, max_output_tokens=cap,
                reasoning=params.reasoning or default)]


def unsent_lines(say: Say, params: Params, models: Sequence[ModelCapabilities]) -> list[str]:
    """One line per model of the route that takes one of the server's settings not at all
    (Claude takes no temperature): the setting is left out of its requests."""
    return [say("commands.reply.params_not_taken", model=caps.model, setting=setting)
            for caps in models for setting in unsent_settings(params, caps)]


def refusal_lines(say: Say, refused: Sequence[tuple[str, Refusal]]) -> list[str]:
    """What each model's provider refused and the bot healed, as (model, refusal) pairs:
    "claude-x: temperature dropped: the provider refused it"."""
    return [say("commands.status.refused_parameter", model=model, parameter=refusal.path)
            if refusal.value is None else
            say("commands.status.refused_value", model=model, parameter=refusal.path, value=refusal.value)
            for model, refusal in refused]


async def settings_lines(say: Say, session: AsyncSession, guild_id: int,
                         models: Sequence[ModelCapabilities] = ()) -> list[str]:
    """The server's limits and generation settings, and which of them `models` (the route's
    models) do not take, for `/status`."""
    params = await get_params(session, guild_id)
    return [*limit_lines(say, await get_limits(session, guild_id)), *params_lines(say, params),
            *unsent_lines(say, params, models)]
