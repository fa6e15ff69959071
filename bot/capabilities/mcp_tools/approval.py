"""Allow / Deny: the asker decides whether a server tool that may change something runs.

Discord makes a message ephemeral only as the response to an interaction. A question
asked by a mention or a reply has none, so this prompt cannot be ephemeral: it is a
normal message in the answer's channel that mentions the asker (and no one else), and
only the asker's press counts; anyone else who presses reads an ephemeral refusal and
nothing changes. The prompt names the tool, its server and its arguments (a bounded code
block) and keeps its buttons for APPROVAL_SECONDS; once decided or expired it is edited to
one line saying what happened, without the arguments or the buttons. A plain discord.py
view kept in this process: after a restart its buttons answer nothing (the answer that
asked is gone too).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Literal

import discord

from bot.cogs.base import reply
from bot.tools.registry import ToolContext
from providers.i18n import t
from stream.interrupt import Interrupt

log = logging.getLogger(__name__)

APPROVAL_SECONDS = 60.0
MAX_SHOWN_ARGUMENTS = 1_200
Decision = Literal["allowed", "denied", "expired", "stopped", "unasked"]
# An outcome without a press -> what the prompt then says (literal keys: the catalog check reads them).
UNPRESSED = {"expired": "chat.mcp.expired", "stopped": "chat.mcp.stopped"}


class Approval(discord.ui.View):
    """Allow and Deny for one call; `allowed` None until the asker presses."""

    def __init__(self, asker_id: int, locale: str | None, seconds: float = APPROVAL_SECONDS) -> None:
        super().__init__(timeout=seconds)
        self.asker_id = asker_id
        self.locale = locale
        self.allowed: bool | None = None
        self.named: dict[str, str] = {}  # the tool and its server, as the prompt names them
        for key, style, allowed in (("chat.mcp.button_allow", discord.ButtonStyle.success, True),
                                    ("chat.mcp.button_deny", discord.ButtonStyle.danger, False)):
            button: discord.ui.Button[Approval] = discord.ui.Button(label=t(key, locale), style=style)
            button.callback = self._pressed(allowed)  # type: ignore[method-assign]
            self.add_item(button)

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        if interaction.user.id == self.asker_id:
            return True
        await reply(interaction, "commands.error.mcp_not_yours")
        return False

    def _pressed(self, allowed: bool) -> Any:
        async def pressed(interaction: discord.Interaction) -> None:
            if self.allowed is not None:
                return
            self.allowed = allowed
            self.stop()
            await interaction.response.edit_message(
                content=self.decided("chat.mcp.allowed" if allowed else "chat.mcp.denied"), view=None)
        return pressed

    def decided(self, outcome: str) -> str:
        """The one line the prompt becomes: the tool, its server, what happened."""
        return t("chat.mcp.decided", self.locale, outcome=t(outcome, self.locale), **self.named)

    async def on_error(self, interaction: discord.Interaction, error: Exception, item: discord.ui.Item[Any], /) -> None:
        log.error("a tool approval press failed with %s", type(error).__name__, exc_info=error)


async def ask_asker(context: ToolContext, locale: str | None, server: str, tool: str,
                    arguments: dict[str, Any], seconds: float = APPROVAL_SECONDS,
                    stop: Interrupt | None = None) -> Decision:
    """Post the prompt in the answer's channel and wait for the asker's press (or the
    answer's `stop`: /stop, a restart)."""
    channel, asker = context.channel, context.asker
    if channel is None or asker is None:
        return "unasked"
    if stop is not None and stop.is_set():
        return "stopped"
    view = Approval(asker.id, locale, seconds)
    view.named = {"tool": shown_name(tool), "server": shown_name(server)}
    body = t("chat.mcp.ask", locale, asker=asker.mention, seconds=int(seconds), **view.named)
    try:
        message = await channel.send(f"{body}\n{code_block(arguments)}", view=view,
                                     allowed_mentions=discord.AllowedMentions(everyone=False, roles=False,
                                                                              users=[asker]))
    except discord.HTTPException as exc:
        log.warning("a tool approval prompt could not be posted (%s): the tool does not run", type(exc).__name__)
        return "unasked"
    outcome = await _pressed_or_stopped(view, stop)
    if outcome in ("expired", "stopped"):
        view.stop()
        try:
            await message.edit(content=view.decided(UNPRESSED[outcome]), view=None)
        except discord.HTTPException as exc:
            log.info("a tool approval prompt was not updated (%s)", type(exc).__name__)
    return outcome


async def _pressed_or_stopped(view: Approval, stop: Interrupt | None) -> Decision:
    """Whichever comes first: a press, the view's timeout, the answer stopped."""
    pressed = asyncio.ensure_future(view.wait())
    stopped = asyncio.ensure_future(stop.wait()) if stop is not None else None
    try:
        await asyncio.wait({pressed} | ({stopped} if stopped else set()), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiting in (pressed, stopped):
            if waiting is not None and not waiting.done():
                waiting.cancel()
    if not pressed.done() or pressed.cancelled():
        return "stopped"
    if pressed.result():  # True: timed out with no press
        return "expired"
    return "allowed" if view.allowed else "denied"


def shown_name(name: str) -> str:
    """A server's or tool's name as a message shows it: no markdown, no mentions, bounded."""
    return discord.utils.escape_mentions(discord.utils.escape_markdown(name[:100]))


def code_block(arguments: dict[str, Any]) -> str:
    """The arguments as indented JSON in a code block nothing inside can close, bounded."""
    text = json.dumps(arguments, ensure_ascii=False, indent=1, default=str)
    if len(text) > MAX_SHOWN_ARGUMENTS:
        text = text[:MAX_SHOWN_ARGUMENTS] + "\n…"
    return "```json\n" + text.replace("```", "`\u200b`\u200b`") + "\n```"
