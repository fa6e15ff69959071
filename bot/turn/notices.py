"""What a turn says besides the answer: why nothing ran, a fallback notice, and the
end of an answer that failed (its partial text marked interrupted, then the error embed,
scoped to whose key failed)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Sequence
from typing import Any

from babel import Locale, UnknownLocaleError
from babel.units import format_unit

from bot.edge.command_names import for_discord
from bot.errors import ErrorScene, error_embed
from bot.load.metrics import DELIVERY_FAILURE_KINDS, DELIVERY_FAILURES, closed_label
from bot.turn.attempts import target_label
from bot.turn.context import TurnContext
from providers.i18n import normalize_locale, t
from providers.types import ProviderError
from stream.buffer import MessageDelivery
from stream.orchestrator import StreamResult
from stream.sink import EmbedSpec, SinkError

log = logging.getLogger(__name__)

ERROR_COLOR = 0xED4245
# Why no attempt could run -> the line the member reads.
BLOCKED_KEYS = {
    "no_route": "chat.not_configured",
    "member_key_required": "chat.member_key_required",
    "no_usable_key": "chat.keys_cooling",  # every key rests after errors
    "no_key": "chat.no_key_configured",  # no key stored for any model tried
    "server_keys_required": "chat.server_keys_required",
    "personal_model_missing": "chat.personal_model_missing",  # a DM: the member's key, no model
    "personal_key_missing": "chat.personal_key_missing",  # a DM: the member's model, no key
}


async def say(ctx: TurnContext, key: str, *, reply: bool = True, **params: Any) -> None:
    """One localized line into the channel; a Discord failure here is not worth more."""
    with contextlib.suppress(SinkError):
        await ctx.sink.send(for_discord(t(key, ctx.locale, **params), ctx.locale), reply=reply)


def blocked_key(reason: str, in_dm: bool) -> str:
    """The line for why nothing ran; a DM without any route has its own (no server to set up)."""
    key = BLOCKED_KEYS.get(reason, "chat.not_configured")
    return "chat.not_configured_dm" if in_dm and key == "chat.not_configured" else key


async def say_blocked(ctx: TurnContext, reason: str) -> None:
    await say(ctx, blocked_key(reason, ctx.guild_id is None))


async def fallback_notice(ctx: TurnContext, server_route: bool, model: str) -> None:
    key = "chat.server_fallback_used" if server_route else "chat.fallback_used"
    await say(ctx, key, reply=False, model=model)


async def tool_limit_notice(ctx: TurnContext, delivery: MessageDelivery) -> None:
    """The model still wanted tools past the loop's bounds: say the answer ends here."""
    notice = t("chat.tool_limit_reached", ctx.locale)
    if delivery.messages:
        await delivery.add_note(f"*{notice}*")
    else:
        await say(ctx, "chat.tool_limit_reached")


# How an answer that did not fail may still have ended early -> the note under it.
# `stop`: /stop or the answer's Stop button; the text so far stays, marked stopped.
END_NOTES = {
    "deadline": "chat.answer_deadline",
    "shutdown": "chat.bot_restarting",
    "messages": "chat.answer_too_long",
    "stop": "chat.answer_stopped",
}


# Ends said on their own line when no text showed (a stop is the member's own doing).
SAID_ALONE = frozenset({"deadline", "shutdown"})


async def end_notes(ctx: TurnContext, delivery: MessageDelivery, result: StreamResult) -> None:
    """A bound, a shutdown or a stop ended the answer: say so under what was said."""
    reason = result.cut_at or result.interrupted
    key = END_NOTES.get(reason or "")
    if key is not None:
        duration = time_limit(ctx.limits.total_seconds, ctx.locale)
        note = f"*{t(key, ctx.locale, duration=duration, count=ctx.max_messages)}*"
        if delivery.messages:
            await delivery.add_note(note)
        elif reason in SAID_ALONE:  # nothing showed yet: the member would hear nothing at all
            with contextlib.suppress(SinkError):
                await ctx.sink.send(note, reply=True)
    if result.delivery_failure is not None:
        DELIVERY_FAILURES.labels(closed_label(result.delivery_failure, DELIVERY_FAILURE_KINDS)).inc()
        log.error("the answer could not be delivered in full (%s); %d characters were written",
                  result.delivery_failure, len(result.text))
        if result.delivery_failure == "unavailable":  # Discord itself failed: try again later
            _in_background(delivery.repair())


def time_limit(seconds: float, locale: str | None) -> str:
    """The answer's time limit in the reader's language ("5 seconds", "5 minutes", "5 秒")."""
    try:
        language = Locale.parse(normalize_locale(locale) or "en", sep="-")
    except (ValueError, UnknownLocaleError):
        language = Locale("en")
    whole = round(seconds)
    for size, unit in ((3600, "duration-hour"), (60, "duration-minute")):
        if whole >= size and whole % size == 0:
            return format_unit(whole // size, unit, locale=language)
    return format_unit(whole, "duration-second", locale=language)


_BACKGROUND: set[asyncio.Task[Any]] = set()


def _in_background(work: Coroutine[Any, Any, Any]) -> None:
    """Run `work` after the turn returns; the task is kept until it ends (asyncio keeps
    only weak references to tasks)."""
    task = asyncio.get_running_loop().create_task(work)
    _BACKGROUND.add(task)
    task.add_done_callback(_BACKGROUND.discard)


def interrupted_note(locale: str | None) -> str:
    """The italic line that marks an answer cut short by an error."""
    return f"*{t('chat.interrupted', locale)}*"


def plain_error_embed(error: ProviderError, locale: str | None) -> EmbedSpec:
    """The error class only (never the raw message: no secrets), when rendering failed."""
    code = f" ({error.code})" if error.code else ""
    return EmbedSpec(title=t("chat.stream_error_title", locale), description=f"`{error.type}`{code}",
                     color=ERROR_COLOR)


async def show_failure(ctx: TurnContext, delivery: MessageDelivery, error: ProviderError,
                       scene: ErrorScene) -> bool:
    """Keep the partial text (marked interrupted) and post the embed; True when it landed."""
    if delivery.text.strip():
        await delivery.add_note(interrupted_note(ctx.locale))
    try:
        embed = error_embed(error, scene)
    except Exception:  # noqa: BLE001 - the plain embed is better than none
        log.exception("rendering the error embed failed")
        embed = plain_error_embed(error, ctx.locale)
    return await delivery.send_embed(embed) is not None


def fallback_chain_of(targets: Sequence[Any]) -> tuple[str, ...]:
    return tuple(target_label(target) for target in targets)
